/**
 * A social-marketing panel's "API v2" (docs/spec-notes.md#social-marketing-panel-api-v2): one endpoint, form-encoded
 * POSTs with the API key in the `key` field and an `action` (`services`, `add`, `status`). Panels type fields loosely
 * (numbers as strings and vice versa), so numbers are read leniently (panel-answers.ts); errors are `{"error": "…"}`,
 * usually with HTTP 200 (panel-errors.ts).
 */
import { ToolError } from '../../shared/errors.js';
import type { Logger } from '../../shared/log.js';
import type { Fetched, Upstream } from '../upstream.js';
import type { Unconfigured } from '../upstream-types.js';
import {
  AddAnswerSchema,
  BalanceAnswerSchema,
  readServiceList,
  ServicesAnswerSchema,
  StatusAnswerSchema,
  type SmmService,
} from './panel-answers.js';
import { interpretPanel } from './panel-errors.js';

export type { SmmService } from './panel-answers.js';
export { panelError } from './panel-errors.js';

/** Our order states; `ordered` is what smm-order answers, the rest come from the panel's status words. */
export const ORDER_STATUSES = [
  'ordered',
  'pending',
  'in_progress',
  'completed',
  'partial',
  'canceled',
  'unknown',
] as const;
/** One of {@link ORDER_STATUSES}. */
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** The panel's status words (lower case) and the status we report for each; any other word is `unknown`. */
export const PANEL_STATUS_MAP: Readonly<Record<string, OrderStatus>> = {
  pending: 'pending',
  'in progress': 'in_progress',
  processing: 'in_progress',
  completed: 'completed',
  partial: 'partial',
  canceled: 'canceled',
  cancelled: 'canceled',
};

/** Our status for a panel status word (any case, surrounding spaces ignored). */
export function mapPanelStatus(word: string): OrderStatus {
  return PANEL_STATUS_MAP[word.trim().toLowerCase()] ?? 'unknown';
}

/** An order's state at the panel. */
export interface PanelOrderStatus {
  status: OrderStatus;
  /** The panel's own word, e.g. `In progress`. */
  panelStatus: string;
  /** What the panel billed this server, in its currency. */
  charge: number | null;
  startCount: number | null;
  remains: number | null;
  currency: string | null;
}

/** What an order names. */
export interface NewOrder {
  serviceId: number;
  link: string;
  quantity: number;
}

/** The social-marketing panel: service list (cached), order placement (once, never retried) and order status. */
export interface SmmPanelProvider {
  /** The upstream's label, for messages. */
  readonly source: string;
  /** Whether a panel URL and key are configured; without them every call is refused with not_implemented. */
  readonly configured: boolean;
  /** What the operator has not configured (the panel URL or key), answered before any payment; undefined when set. */
  readonly unconfigured: Unconfigured | undefined;
  /** Every service the panel sells (cached; entries the panel garbled are left out). */
  services(signal?: AbortSignal): Promise<Fetched<SmmService[]>>;
  /** One service from the cached list; invalid_input naming `serviceId` when the panel does not sell it. */
  service(serviceId: number, signal?: AbortSignal): Promise<SmmService>;
  /** Places an order (`action=add`) exactly once and returns the panel's order id. */
  addOrder(order: NewOrder, signal?: AbortSignal): Promise<string>;
  /** The order's state at the panel (cached briefly: panels ask to be polled sparingly). */
  orderStatus(orderId: string, signal?: AbortSignal): Promise<Fetched<PanelOrderStatus>>;
}

/** How long an order status is reused before the panel is asked again. */
export const STATUS_TTL_MS = 30_000;

/** What each panel action needs: the upstream client, its label, the log and the key (refused when unconfigured). */
interface PanelClient {
  upstream: Upstream;
  label: string;
  log: Logger;
  /** The panel key; throws not_implemented when no panel is configured. */
  key(): string;
}

/** Every service the panel sells (`action=services`), leaving out entries it garbled; upstream_invalid if none is readable. */
async function fetchServices(panel: PanelClient, signal?: AbortSignal): Promise<Fetched<SmmService[]>> {
  const { upstream, label, log } = panel;
  const fetched = await upstream.request({
    method: 'POST',
    path: '',
    form: { key: panel.key(), action: 'services' },
    schema: ServicesAnswerSchema,
    interpret: interpretPanel(label, {}, log),
    signal,
  });
  await assertUsdPanel(panel, signal);
  const { list, garbled } = readServiceList(fetched.data);
  if (garbled > 0 && !fetched.cached)
    log.warn('the marketing panel listed services we cannot read; left out', {
      upstream: 'smm',
      garbled,
      kept: list.length,
    });
  if (list.length === 0 && garbled > 0) {
    throw new ToolError(
      'upstream_invalid',
      `The ${label} sent a service list this server cannot read. Try again later.`,
    );
  }
  return { ...fetched, data: list };
}

/**
 * Refuses a panel whose account is not in USD (its `action=balance` answer names the currency): the rates it lists
 * are in that currency, and this server has no exchange rate to hold the fixed USD order price against them.
 */
async function assertUsdPanel(panel: PanelClient, signal?: AbortSignal): Promise<void> {
  const { data } = await panel.upstream.request({
    method: 'POST',
    path: '',
    form: { key: panel.key(), action: 'balance' },
    schema: BalanceAnswerSchema,
    interpret: interpretPanel(panel.label, {}, panel.log),
    signal,
  });
  const currency = data.currency?.toUpperCase();
  if (currency === 'USD') return;
  const settings = ['SMM_PANEL_URL', 'SMM_PANEL_KEY'];
  if (currency === undefined || !/^[A-Z]{3}$/.test(currency)) {
    throw new ToolError(
      'upstream_invalid',
      `The ${panel.label} did not say which currency its account bills in, so its prices cannot be held against the USD order price; social-marketing orders are unavailable until the operator configures a panel that does (${settings.join(', ')}).`,
      { details: { settings } },
    );
  }
  throw new ToolError(
    'not_implemented',
    `The ${panel.label} account bills in ${currency}, not USD, and this server has no exchange rate, so social-marketing orders are unavailable; the operator must configure a panel account held in USD (${settings.join(', ')}).`,
    { details: { currency, settings } },
  );
}

/** Places an order (`action=add`) exactly once, never retried, and returns the panel's order id. */
async function placeOrder(panel: PanelClient, order: NewOrder, signal?: AbortSignal): Promise<string> {
  const form = {
    key: panel.key(),
    action: 'add',
    service: String(order.serviceId),
    link: order.link,
    quantity: String(order.quantity),
  };
  const placed = await panel.upstream.request({
    method: 'POST',
    path: '',
    form,
    schema: AddAnswerSchema,
    once: true,
    interpret: interpretPanel(panel.label, { serviceId: order.serviceId, quantity: order.quantity }, panel.log),
    signal,
  });
  return placed.data.order;
}

/** The order's state at the panel (`action=status`), cached for {@link STATUS_TTL_MS}. */
async function fetchOrderStatus(
  panel: PanelClient,
  orderId: string,
  signal?: AbortSignal,
): Promise<Fetched<PanelOrderStatus>> {
  const fetched = await panel.upstream.request({
    method: 'POST',
    path: '',
    form: { key: panel.key(), action: 'status', order: orderId },
    schema: StatusAnswerSchema,
    ttlMs: STATUS_TTL_MS,
    interpret: interpretPanel(panel.label, { orderId }, panel.log),
    signal,
  });
  const s = fetched.data;
  const data = {
    status: mapPanelStatus(s.status),
    panelStatus: s.status,
    charge: s.charge,
    startCount: s.start_count,
    remains: s.remains,
    currency: s.currency ?? null,
  };
  return { ...fetched, data };
}

/** Builds the panel provider over its upstream client (base URL = the panel's API endpoint) and the panel key. */
export function createSmmPanelProvider(upstream: Upstream, key: string | undefined, log: Logger): SmmPanelProvider {
  const label = upstream.info.label;
  const configured = upstream.info.baseUrl !== '' && key !== undefined && key !== '';
  const missing: Unconfigured = {
    settings: ['SMM_PANEL_URL', 'SMM_PANEL_KEY'],
    message: `No ${label} is configured on this server (the operator sets SMM_PANEL_URL and SMM_PANEL_KEY), so social-marketing orders are unavailable.`,
  };
  const unconfigured = configured ? undefined : missing;
  const panel: PanelClient = {
    upstream,
    label,
    log,
    key() {
      if (!configured || key === undefined)
        throw new ToolError('not_implemented', missing.message, { details: { settings: missing.settings } });
      return key;
    },
  };

  const services = (signal?: AbortSignal) => fetchServices(panel, signal);

  async function service(serviceId: number, signal?: AbortSignal): Promise<SmmService> {
    const { data } = await services(signal);
    const found = data.find((s) => s.serviceId === serviceId);
    if (!found) {
      throw new ToolError(
        'invalid_input',
        `The ${label} does not sell service ${serviceId}. Find a service id with GET /v1/smm-services.`,
        {
          field: 'serviceId',
        },
      );
    }
    return found;
  }

  return {
    source: label,
    configured,
    unconfigured,
    services,
    service,
    addOrder: (order, signal) => placeOrder(panel, order, signal),
    orderStatus: (orderId, signal) => fetchOrderStatus(panel, orderId, signal),
  };
}
