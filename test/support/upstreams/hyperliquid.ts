import {
  startLookalikeServer,
  type HandlerMode,
  type Lookalike,
  type LookalikeOptions,
  type LookalikeReply,
} from './server.js';

/**
 * A look-alike of the Hyperliquid info API (`POST /info`, /work/shared/docs/upstream-apis.md §1, §13):
 * `meta`, `allMids` and `candleSnapshot` with the documented shapes (decimal strings, nested `req`),
 * a deterministic price path per coin and interval, the 5,000-candle retention and response cap,
 * HTTP 422 plain text for bodies it cannot deserialize, and the shared failure modes of ./server.ts.
 * Its HTTP-200 error habit (`error200`) is a `null` answer, which real SDKs model for unknown coins.
 */

/** How the look-alike answers candleSnapshot for a coin it does not list (undocumented upstream; §1.5). */
export type UnknownCoinAnswer = 'null' | 'empty' | '500';

/** Options of the Hyperliquid look-alike. */
export interface HyperliquidLookalikeOptions extends LookalikeOptions {
  unknownCoin?: UnknownCoinAnswer;
  /** Clock of the look-alike (which candle is forming); default Date.now. */
  now?: () => number;
  /** Candles a coin has per interval (a young listing), instead of the 5,000 the exchange keeps. */
  history?: Record<string, number>;
}

/** The perp universe served by `meta`; MATIC is delisted, as in the documented example. */
export const LOOKALIKE_UNIVERSE = [
  { name: 'BTC', szDecimals: 5, maxLeverage: 40, marginTableId: 56, base: 114_020 },
  { name: 'ETH', szDecimals: 4, maxLeverage: 25, marginTableId: 55, base: 4_321.15 },
  { name: 'SOL', szDecimals: 2, maxLeverage: 20, marginTableId: 54, base: 187.42 },
  { name: 'HYPE', szDecimals: 2, maxLeverage: 10, marginTableId: 52, base: 44.902 },
  { name: 'DOGE', szDecimals: 0, maxLeverage: 10, marginTableId: 52, base: 0.22113 },
  { name: 'XRP', szDecimals: 0, maxLeverage: 20, marginTableId: 54, base: 3.0412 },
  { name: 'kPEPE', szDecimals: 0, maxLeverage: 10, marginTableId: 52, base: 0.011204 },
  { name: 'MATIC', szDecimals: 1, maxLeverage: 20, marginTableId: 20, base: 0.3812, isDelisted: true },
] as const;

const MINUTE = 60_000;
const FIXED_MS: Record<string, number> = {
  '1m': MINUTE,
  '3m': 3 * MINUTE,
  '5m': 5 * MINUTE,
  '15m': 15 * MINUTE,
  '30m': 30 * MINUTE,
  '1h': 60 * MINUTE,
  '2h': 120 * MINUTE,
  '4h': 240 * MINUTE,
  '8h': 480 * MINUTE,
  '12h': 720 * MINUTE,
  '1d': 1440 * MINUTE,
  '3d': 3 * 1440 * MINUTE,
  '1w': 7 * 1440 * MINUTE,
};
const RETAINED = 5000;

/** Deterministic pseudo-random number in [0, 1) from integers (a small integer hash). */
function noise(...parts: number[]): number {
  let h = 2166136261;
  for (const part of parts) {
    h ^= part | 0;
    h = Math.imul(h, 16777619);
    h ^= h >>> 13;
    h = Math.imul(h, 0x5bd1e995);
    h ^= h >>> 15;
  }
  return (h >>> 0) / 4294967296;
}

function seedOf(text: string): number {
  let h = 7;
  for (const ch of text) h = (h * 31 + ch.charCodeAt(0)) | 0;
  return h;
}

/** Price at the open of candle number k: a few slow waves plus jitter around the coin's base price. */
function priceAt(base: number, seed: number, k: number): number {
  const wave = 0.06 * Math.sin(k / 47 + seed) + 0.025 * Math.sin(k / 13 + seed / 3) + 0.01 * Math.sin(k / 5);
  return base * (1 + wave + 0.004 * (noise(seed, k) - 0.5));
}

const fmt = (x: number) => String(Number(x.toPrecision(6)));

/** Open times of candle k for an interval: fixed steps from the epoch, or calendar months for 1M. */
function openTime(interval: string, k: number): number {
  if (interval === '1M') return Date.UTC(1970, k, 1);
  return k * FIXED_MS[interval]!;
}

function indexAt(interval: string, time: number): number {
  if (interval === '1M') {
    const d = new Date(time);
    return (d.getUTCFullYear() - 1970) * 12 + d.getUTCMonth();
  }
  return Math.floor(time / FIXED_MS[interval]!);
}

/** One candle in the upstream's wire shape (decimal strings). */
function candle(coin: string, base: number, interval: string, k: number) {
  const seed = seedOf(`${coin}/${interval}`);
  const o = priceAt(base, seed, k);
  const c = priceAt(base, seed, k + 1);
  const h = Math.max(o, c) * (1 + 0.003 * noise(seed, k, 1));
  const l = Math.min(o, c) * (1 - 0.003 * noise(seed, k, 2));
  const v = (1_000_000 / base) * (0.5 + noise(seed, k, 3));
  return {
    t: openTime(interval, k),
    T: openTime(interval, k + 1) - 1,
    s: coin,
    i: interval,
    o: fmt(o),
    c: fmt(c),
    h: fmt(h),
    l: fmt(l),
    v: fmt(v),
    n: 100 + Math.floor(noise(seed, k, 4) * 20_000),
  };
}

interface SnapshotReq {
  coin?: unknown;
  interval?: unknown;
  startTime?: unknown;
  endTime?: unknown;
}

function snapshot(
  req: SnapshotReq,
  now: number,
  options: HyperliquidLookalikeOptions,
  mode: HandlerMode | undefined,
): LookalikeReply {
  const { coin, interval, startTime, endTime } = req;
  if (
    typeof coin !== 'string' ||
    typeof interval !== 'string' ||
    typeof startTime !== 'number' ||
    !(interval in FIXED_MS || interval === '1M')
  ) {
    return {
      status: 422,
      text: 'Failed to deserialize the JSON body into the target type: req: missing or invalid field',
    };
  }
  if (mode === 'error200') return { json: null };
  if (mode === 'empty') return { json: [] };
  const listed = LOOKALIKE_UNIVERSE.find((u) => u.name === coin);
  if (!listed) {
    const answer = options.unknownCoin ?? 'null';
    if (answer === '500') return { status: 500, text: 'Internal Server Error' };
    return { json: answer === 'null' ? null : [] };
  }
  const end = typeof endTime === 'number' ? Math.min(endTime, now) : now;
  const newest = indexAt(interval, now);
  const oldest = newest - Math.min(RETAINED, options.history?.[listed.name] ?? RETAINED) + 1;
  const rows = [];
  for (let k = Math.max(oldest, indexAt(interval, startTime)); k <= newest && rows.length < RETAINED; k++) {
    const t = openTime(interval, k);
    if (t < startTime) continue;
    if (t > end) break;
    rows.push(candle(listed.name, listed.base, interval, k));
  }
  if (mode === 'mismatch')
    return {
      json: rows.map(({ c: _c, ...rest }, i) => (i === rows.length - 1 ? { ...rest, o: { px: rest.o } } : rest)),
    };
  return { json: rows };
}

function meta(mode: HandlerMode | undefined): LookalikeReply {
  if (mode === 'error200') return { json: null };
  const universe = mode === 'empty' ? [] : LOOKALIKE_UNIVERSE.map(({ base: _base, ...entry }) => entry);
  const body = {
    universe: mode === 'mismatch' ? universe.map(({ name: _name, ...rest }) => rest) : universe,
    marginTables: [[56, { description: 'tiered 40x', marginTiers: [{ lowerBound: '0.0', maxLeverage: 40 }] }]],
    collateralToken: 0,
  };
  return { json: body };
}

function allMids(now: number): LookalikeReply {
  const mids: Record<string, string> = { '@107': '44.90', 'PURR/USDC': '0.1873' };
  for (const u of LOOKALIKE_UNIVERSE) {
    if ('isDelisted' in u) continue;
    mids[u.name] = fmt(priceAt(u.base, seedOf(`${u.name}/1m`), indexAt('1m', now)));
  }
  return { json: mids };
}

/** Starts the Hyperliquid look-alike on 127.0.0.1 (port 0). */
export function startHyperliquidLookalike(options: HyperliquidLookalikeOptions = {}): Promise<Lookalike> {
  const now = options.now ?? Date.now;
  return startLookalikeServer((req, mode) => {
    if (req.path !== '/info' || req.method !== 'POST') return { status: 404, text: 'Not Found' };
    const body = req.body as { type?: unknown; req?: SnapshotReq } | undefined;
    if (!body || typeof body !== 'object') {
      return {
        status: 422,
        text: 'Failed to deserialize the JSON body into the target type: expected value at line 1 column 1',
      };
    }
    switch (body.type) {
      case 'meta':
        return meta(mode);
      case 'allMids':
        return allMids(now());
      case 'candleSnapshot':
        return snapshot(body.req ?? {}, now(), options, mode);
      default:
        return {
          status: 422,
          text: `Failed to deserialize the JSON body into the target type: type: unknown variant \`${String(body.type)}\``,
        };
    }
  }, options);
}

/** Matches look-alike requests of one info type (for `failNext(mode, count, only)`). */
export const infoType = (type: string) => (req: { body: unknown }) =>
  (req.body as { type?: unknown } | undefined)?.type === type;
