import {
  startLookalikeServer,
  type HandlerMode,
  type Lookalike,
  type LookalikeOptions,
  type LookalikeReply,
  type LookalikeRequest,
} from './server.js';

/**
 * A look-alike of a Perfect Panel–style social-marketing panel "API v2" (/work/shared/docs/upstream-apis.md §7, §13):
 * one endpoint (any path, e.g. `/api/v2`) taking form-encoded POSTs (or a GET query string) with `key` and `action`:
 * `services` (loosely typed list: ids as numbers or strings, rate/min/max as strings), `add` (`{"order": 23501}`,
 * checking service, quantity bounds, link, duplicate active link and balance), `status` (one `order` or a list in
 * `orders`), `balance`. Every refusal is `{"error": "…"}` with HTTP 200, in the panel's usual words.
 * Handler failure modes: `error200` = `{"error": errorText}` (default `Incorrect request`), `empty` = `[]` / `{}`,
 * `mismatch` = unreadable services, an order id as an object, a numeric status.
 */

/** The key the look-alike accepts by default. */
export const PANEL_KEY = 'test-panel-key-7d1f0c';

/** One fixture service, as the panel types it (deliberately mixed). */
export interface PanelService {
  service: number | string;
  name: string;
  type: string;
  category: string;
  rate: string | number;
  min: string | number;
  max: string | number;
  refill: boolean | string;
  cancel: boolean | number;
}

/** The services the panel sells. */
export const SERVICES: PanelService[] = [
  {
    service: 1,
    name: 'Instagram Followers [Real, 30 days refill]',
    type: 'Default',
    category: 'Instagram Followers',
    rate: '0.90',
    min: '50',
    max: '10000',
    refill: true,
    cancel: true,
  },
  {
    service: '2',
    name: 'Instagram Likes [Fast]',
    type: 'Default',
    category: 'Instagram Likes',
    rate: '0.15',
    min: '10',
    max: '50000',
    refill: false,
    cancel: 0,
  },
  {
    service: 3,
    name: 'TikTok Views',
    type: 'Default',
    category: 'TikTok Views',
    rate: 0.02,
    min: 100,
    max: 1000000,
    refill: '0',
    cancel: 1,
  },
  {
    service: 4,
    name: 'YouTube Subscribers [Premium]',
    type: 'Default',
    category: 'YouTube Subscribers',
    rate: '45.00',
    min: '100',
    max: '5000',
    refill: '1',
    cancel: false,
  },
  {
    service: 5,
    name: 'Telegram Channel Members',
    type: 'Default',
    category: 'Telegram Members',
    rate: '1.20',
    min: '100',
    max: '20000',
    refill: false,
    cancel: true,
  },
  {
    service: 6,
    name: 'Twitter Retweets',
    type: 'Custom Comments',
    category: 'Twitter / X Retweets',
    rate: '2.5',
    min: '20',
    max: '1000',
    refill: false,
    cancel: false,
  },
];

/** A placed order as the panel keeps it. */
export interface PanelOrder {
  order: number;
  service: number;
  link: string;
  quantity: number;
  charge: number;
  status: string;
  remains: number;
  startCount: number;
}

/** Options of the panel look-alike. */
export interface SmmPanelLookalikeOptions extends LookalikeOptions {
  key?: string;
  /** Account balance in USD; default 1000. */
  balance?: number;
  /** First order id; default 23501. */
  firstOrder?: number;
  /** Answer order ids as strings (some panels do). */
  orderIdAsString?: boolean;
  /** The account currency `balance` answers; default `USD`; null leaves it out. */
  currency?: string | null;
  /** The services sold; default {@link SERVICES}. */
  services?: PanelService[];
}

/** A running panel look-alike with its orders and knobs for tests. */
export interface SmmPanelLookalike extends Lookalike {
  /** Orders placed so far, oldest first. */
  readonly orders: readonly PanelOrder[];
  /** Requests received per action (failed ones included). */
  readonly actions: Readonly<Record<string, number>>;
  /** Sets an order's status word (e.g. `In progress`, `Completed`, `Cancelled`) and remaining units. */
  setStatus(order: number, status: string, remains?: number): void;
  /** Sets the account balance in USD. */
  setBalance(usd: number): void;
  /** Text of the `error200` mode. */
  errorText: string;
}

const error = (text: string): LookalikeReply => ({ json: { error: text } });
const ACTIVE = new Set(['pending', 'in progress', 'processing']);

function fieldsOf(req: LookalikeRequest): URLSearchParams {
  const form = new URLSearchParams(req.rawBody);
  for (const [k, v] of req.query) if (!form.has(k)) form.set(k, v);
  return form;
}

/** The status fields of one order, as panels answer them. */
const statusOf = (o: PanelOrder) => ({
  charge: o.charge.toFixed(5),
  start_count: String(o.startCount),
  status: o.status,
  remains: String(o.remains),
  currency: 'USD',
});

/** The panel's orders and account, as `addOrder` changes them. */
interface PanelBook {
  services: PanelService[];
  orders: PanelOrder[];
  state: { balance: number; next: number };
  asString: boolean;
}

/** `action=add`: a new order charged to the balance, or the panel's refusal. */
function addOrder(form: URLSearchParams, mode: HandlerMode | undefined, p: PanelBook): LookalikeReply {
  if (mode === 'empty') return { json: {} };
  const service = p.services.find((s) => String(s.service) === form.get('service'));
  if (!service) return error('Incorrect service ID');
  const link = form.get('link') ?? '';
  if (link.trim() === '') return error('Incorrect link');
  const quantity = Number(form.get('quantity'));
  if (!Number.isInteger(quantity) || quantity < Number(service.min))
    return error(`Quantity less than minimal ${service.min}`);
  if (quantity > Number(service.max)) return error(`Quantity more than maximal ${service.max}`);
  if (
    p.orders.some((o) => o.link === link && o.service === Number(service.service) && ACTIVE.has(o.status.toLowerCase()))
  ) {
    return error('You have active order with this link. Please wait until order being completed.');
  }
  const charge = (Number(service.rate) * quantity) / 1000;
  if (charge > p.state.balance) return error('Not enough funds on balance');
  p.state.balance -= charge;
  const order: PanelOrder = {
    order: p.state.next++,
    service: Number(service.service),
    link,
    quantity,
    charge,
    status: 'Pending',
    remains: quantity,
    startCount: 0,
  };
  p.orders.push(order);
  if (mode === 'mismatch') return { json: { order: { id: order.order } } };
  return { json: { order: p.asString ? String(order.order) : order.order } };
}

/** `action=status`: one order's status, or several (`orders=1,2`), each or its error. */
function orderStatus(form: URLSearchParams, mode: HandlerMode | undefined, orders: PanelOrder[]): LookalikeReply {
  if (mode === 'empty') return { json: {} };
  const many = form.get('orders');
  if (many !== null) {
    return {
      json: Object.fromEntries(
        many
          .split(',')
          .map((id) => [
            id,
            ((o) => (o ? statusOf(o) : { error: 'Incorrect order ID' }))(
              orders.find((x) => String(x.order) === id.trim()),
            ),
          ]),
      ),
    };
  }
  const found = orders.find((o) => String(o.order) === form.get('order'));
  if (!found) return error('Incorrect order ID');
  if (mode === 'mismatch') return { json: { ...statusOf(found), status: 42 } };
  return { json: statusOf(found) };
}

/** Starts the panel look-alike. */
export async function startSmmPanelLookalike(options: SmmPanelLookalikeOptions = {}): Promise<SmmPanelLookalike> {
  const key = options.key ?? PANEL_KEY;
  const orders: PanelOrder[] = [];
  const actions: Record<string, number> = {};
  const state = { balance: options.balance ?? 1000, next: options.firstOrder ?? 23501, errorText: 'Incorrect request' };
  const services = options.services ?? SERVICES;
  const currency = options.currency === undefined ? 'USD' : options.currency;

  const server = await startLookalikeServer((req, mode) => {
    const form = fieldsOf(req);
    const action = form.get('action') ?? '';
    actions[action] = (actions[action] ?? 0) + 1;
    if (form.get('key') !== key) return error('Invalid API key');
    if (mode === 'error200') return error(state.errorText);
    switch (action) {
      case 'services':
        if (mode === 'empty') return { json: [] };
        if (mode === 'mismatch') return { json: services.map((s) => ({ ...s, rate: 'n/a', min: 'ten' })) };
        return { json: services };
      case 'add':
        return addOrder(form, mode, { services, orders, state, asString: options.orderIdAsString === true });
      case 'status':
        return orderStatus(form, mode, orders);
      case 'balance':
        return { json: { balance: state.balance.toFixed(5), ...(currency === null ? {} : { currency }) } };
      default:
        return error('Incorrect request');
    }
  }, options);

  return Object.defineProperties(server, {
    orders: { get: () => orders },
    actions: { get: () => actions },
    setStatus: {
      value: (order: number, status: string, remains?: number) => {
        const found = orders.find((o) => o.order === order);
        if (!found) throw new Error(`no order ${order}`);
        found.status = status;
        if (remains !== undefined) found.remains = remains;
        found.startCount = 3572;
      },
    },
    setBalance: { value: (usd: number) => void (state.balance = usd) },
    errorText: { get: () => state.errorText, set: (t: string) => void (state.errorText = t) },
  }) as SmmPanelLookalike;
}
