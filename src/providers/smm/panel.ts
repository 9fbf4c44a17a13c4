import { z } from 'zod';
import { ToolError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { Fetched, Upstream } from '../upstream.js';

/**
 * A social-marketing panel's "API v2" (docs/spec-notes.md#social-marketing-panel-api-v2): one endpoint, form-encoded
 * POSTs with the API key in the `key` field and an `action` (`services`, `add`, `status`). Panels type fields loosely
 * (numbers as strings and vice versa), so numbers are read leniently; errors are `{"error": "…"}`, usually with HTTP
 * 200.
 */

const NOT_CHARGED = 'you were not charged';

/** Integer as number or digit string. */
const int = z
  .union([z.number(), z.string().trim().regex(/^\d+$/, 'must be an integer')])
  .transform(Number)
  .pipe(z.number().int().nonnegative());
/** Non-negative decimal as number or string. */
const decimal = z
  .union([
    z.number(),
    z
      .string()
      .trim()
      .regex(/^\d+(\.\d+)?$/, 'must be a decimal number'),
  ])
  .transform(Number)
  .pipe(z.number().nonnegative().finite());
const optionalDecimal = z
  .union([z.number(), z.string(), z.null()])
  .optional()
  .transform((v) => {
    if (v === null || v === undefined || (typeof v === 'string' && v.trim() === '')) return null;
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  });
const yes = z
  .union([z.boolean(), z.number(), z.string(), z.null()])
  .optional()
  .transform(
    (v) => v === true || v === 1 || (typeof v === 'string' && ['1', 'true', 'yes'].includes(v.trim().toLowerCase())),
  );

const ServiceSchema = z.object({
  service: int.pipe(z.number().min(1)),
  name: z.string(),
  type: z.string().nullish(),
  category: z.string().nullish(),
  rate: decimal,
  min: int,
  max: int,
  refill: yes,
  cancel: yes,
});
const ServicesAnswerSchema = z.array(z.unknown());
const AddAnswerSchema = z.object({
  order: z
    .union([
      z.number().int().nonnegative(),
      z
        .string()
        .trim()
        .regex(/^[A-Za-z0-9_-]{1,64}$/),
    ])
    .transform(String),
});
const StatusAnswerSchema = z.object({
  status: z.string().min(1),
  charge: optionalDecimal,
  start_count: optionalDecimal,
  remains: optionalDecimal,
  currency: z.string().nullish(),
});

/** One service the panel sells. */
export interface SmmService {
  serviceId: number;
  name: string;
  type: string;
  category: string;
  /** Price per 1,000 units in the panel's currency (USD assumed). */
  ratePer1000: number;
  min: number;
  max: number;
  refill: boolean;
  cancel: boolean;
}

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
  /** What the panel charged us, in its currency. */
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

interface ErrorContext {
  serviceId?: number;
  quantity?: number;
  orderId?: string;
}

/** Maps a panel's `{"error": "…"}` text to the error the caller sees (the panel's common texts: docs/spec-notes.md#social-marketing-panel-api-v2). */
export function panelError(text: string, label: string, at: ErrorContext, log: Logger): ToolError {
  const said = text.trim().slice(0, 200);
  const lower = said.toLowerCase();
  if (/api[ _-]?key|invalid key|key is (invalid|wrong)|unauthori[sz]ed/.test(lower)) {
    log.error('the marketing panel refused our API key; check SMM_PANEL_KEY', { upstream: 'smm' });
    return new ToolError(
      'upstream_unavailable',
      `The ${label} refused this server's credentials (an operator problem). Try again later; ${NOT_CHARGED}.`,
    );
  }
  if (/not enough funds|insufficient (funds|balance)|low balance|balance is (too )?low/.test(lower)) {
    log.error('the marketing panel account is out of funds; top it up', { upstream: 'smm' });
    return new ToolError(
      'upstream_unavailable',
      `The ${label} account of this server is out of funds (an operator problem). Try again later; ${NOT_CHARGED}.`,
    );
  }
  if (lower.includes('quantity')) {
    const min = /less than minimal\s*(\d+)/.exec(lower)?.[1];
    const max = /more than maximal\s*(\d+)/.exec(lower)?.[1];
    const bound = min ? ` (the minimum is ${min})` : max ? ` (the maximum is ${max})` : '';
    return new ToolError(
      'invalid_input',
      `The ${label} refused quantity ${at.quantity ?? ''}${bound}: "${said}". Check the limits with GET /v1/smm-quote; ${NOT_CHARGED}.`,
      {
        field: 'quantity',
        ...(min || max
          ? { details: { ...(min ? { min: Number(min) } : {}), ...(max ? { max: Number(max) } : {}) } }
          : {}),
      },
    );
  }
  if (
    /active order|already (has|have) an? (active )?order|order (is )?already (active|running|in progress)|duplicate/.test(
      lower,
    )
  ) {
    return new ToolError(
      'conflict',
      `The ${label} already has an active order for this link ("${said}"). Wait until it completes, or use another link; ${NOT_CHARGED}.`,
      { field: 'link' },
    );
  }
  if (lower.includes('service')) {
    return new ToolError(
      'invalid_input',
      `The ${label} does not sell service ${at.serviceId ?? ''} ("${said}"). Find one with GET /v1/smm-services; ${NOT_CHARGED}.`,
      { field: 'serviceId' },
    );
  }
  if (lower.includes('order id') || lower.includes('order not found')) {
    return new ToolError('not_found', `The ${label} does not know order ${at.orderId ?? ''} ("${said}").`, {
      field: 'orderId',
    });
  }
  if (/\blink\b|\burl\b/.test(lower)) {
    return new ToolError(
      'invalid_input',
      `The ${label} refused the link ("${said}"). Send the full URL of the post or profile; ${NOT_CHARGED}.`,
      { field: 'link' },
    );
  }
  log.error('the marketing panel refused a request', { upstream: 'smm', error: said });
  return new ToolError(
    'upstream_unavailable',
    `The ${label} refused the request ("${said}"). Try again later; ${NOT_CHARGED}.`,
  );
}

/** Reads the `error` text of a panel answer sent with a non-5xx status (5xx and 429 keep their retry handling). */
function interpretPanel(label: string, at: ErrorContext, log: Logger) {
  return (status: number, json: unknown): ToolError | undefined => {
    if (status >= 500 || typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
    const error = (json as { error?: unknown }).error;
    if (error === undefined || error === null || error === '') return undefined;
    return panelError(typeof error === 'string' ? error : JSON.stringify(error), label, at, log);
  };
}

/** Builds the panel provider over its upstream client (base URL = the panel's API endpoint) and the panel key. */
export function createSmmPanelProvider(upstream: Upstream, key: string | undefined, log: Logger): SmmPanelProvider {
  const label = upstream.info.label;
  const configured = upstream.info.baseUrl !== '' && key !== undefined && key !== '';

  function ready(): string {
    if (!configured || key === undefined) {
      throw new ToolError(
        'not_implemented',
        `No ${label} is configured on this server (the operator sets SMM_PANEL_URL and SMM_PANEL_KEY), so social-marketing orders are unavailable. You were not charged.`,
      );
    }
    return key;
  }

  async function services(signal?: AbortSignal): Promise<Fetched<SmmService[]>> {
    const fetched = await upstream.request({
      method: 'POST',
      path: '',
      form: { key: ready(), action: 'services' },
      schema: ServicesAnswerSchema,
      interpret: interpretPanel(label, {}, log),
      signal,
    });
    const list: SmmService[] = [];
    let garbled = 0;
    for (const raw of fetched.data) {
      const parsed = ServiceSchema.safeParse(raw);
      if (!parsed.success) {
        garbled += 1;
        continue;
      }
      const s = parsed.data;
      list.push({
        serviceId: s.service,
        name: s.name.trim(),
        type: s.type?.trim() || 'Default',
        category: s.category?.trim() ?? '',
        ratePer1000: s.rate,
        min: s.min,
        max: s.max,
        refill: s.refill,
        cancel: s.cancel,
      });
    }
    if (garbled > 0 && !fetched.cached)
      log.warn('the marketing panel listed services we cannot read; left out', {
        upstream: 'smm',
        garbled,
        kept: list.length,
      });
    if (list.length === 0 && garbled > 0) {
      throw new ToolError(
        'upstream_invalid',
        `The ${label} sent a service list this server cannot read. Try again later; ${NOT_CHARGED}.`,
      );
    }
    return { ...fetched, data: list };
  }

  async function service(serviceId: number, signal?: AbortSignal): Promise<SmmService> {
    const { data } = await services(signal);
    const found = data.find((s) => s.serviceId === serviceId);
    if (!found) {
      throw new ToolError(
        'invalid_input',
        `The ${label} does not sell service ${serviceId}. Find a service id with GET /v1/smm-services; ${NOT_CHARGED}.`,
        {
          field: 'serviceId',
        },
      );
    }
    return found;
  }

  async function addOrder(order: NewOrder, signal?: AbortSignal): Promise<string> {
    const form = {
      key: ready(),
      action: 'add',
      service: String(order.serviceId),
      link: order.link,
      quantity: String(order.quantity),
    };
    const placed = await upstream.request({
      method: 'POST',
      path: '',
      form,
      schema: AddAnswerSchema,
      once: true,
      interpret: interpretPanel(label, { serviceId: order.serviceId, quantity: order.quantity }, log),
      signal,
    });
    return placed.data.order;
  }

  async function orderStatus(orderId: string, signal?: AbortSignal): Promise<Fetched<PanelOrderStatus>> {
    const fetched = await upstream.request({
      method: 'POST',
      path: '',
      form: { key: ready(), action: 'status', order: orderId },
      schema: StatusAnswerSchema,
      ttlMs: STATUS_TTL_MS,
      interpret: interpretPanel(label, { orderId }, log),
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

  return { source: label, configured, services, service, addOrder, orderStatus };
}
