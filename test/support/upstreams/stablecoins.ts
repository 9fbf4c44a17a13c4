import { FX_FIXTURE, STABLECOIN_FIXTURE } from './stablecoins-fixture.js';
import { startLookalikeServer, type Lookalike, type LookalikeOptions, type LookalikeReply } from './server.js';

/**
 * A look-alike of the DefiLlama stablecoins API (/work/shared/docs/upstream-apis.md §2, §13): `GET /stablecoins`
 * (`includePrices` ignored, `price` always present) with `peggedAssets` sorted by circulation and the `chains`
 * totals, `GET /stablecoinchains`, `GET /rates` (daily FX snapshots, units per US dollar), and a plain-text 404
 * `Invalid request` for any other route. The fixture holds USD, EUR, JPY, GBP, CHF and VAR pegs, a `price: null`
 * coin per peg family, empty `{}` previous records and the numeric `0` form the upstream's code also emits.
 * Handler failure modes: `error200` = HTTP 200 with an error object, `empty` = no assets, `mismatch` = amounts as strings.
 */

/** Supply on one chain: now and at the previous day/week/month record (null = no record at that time). */
export type ChainSupply = [current: number, prevDay: number | null, prevWeek: number | null, prevMonth: number | null];

/** One fixture stablecoin, written compactly; the look-alike expands it into the upstream's shape. */
export interface CoinSpec {
  id: string;
  name: string;
  symbol: string;
  gecko_id: string | null;
  pegType: string;
  pegMechanism: 'fiat-backed' | 'crypto-backed' | 'algorithmic';
  price: number | null;
  chains: Record<string, ChainSupply>;
  /** Previous records written as `{}` (true) or as the number 0 (`'zero'`) when missing; default `{}`. */
  missingAs?: 'object' | 'zero';
}

export { FX_FIXTURE, STABLECOIN_FIXTURE } from './stablecoins-fixture.js';

const sumOf = (values: Array<number | null>) => values.reduce<number>((s, v) => s + (v ?? 0), 0);

function amounts(
  pegType: string,
  value: number | null,
  missingAs: CoinSpec['missingAs'],
): Record<string, number> | number {
  if (value === null) return missingAs === 'zero' ? 0 : {};
  return { [pegType]: value };
}

/** Expands one fixture coin into the upstream's `peggedAssets[]` entry. */
export function peggedAsset(spec: CoinSpec): Record<string, unknown> {
  const entries = Object.entries(spec.chains).sort((a, b) => b[1][0] - a[1][0]);
  const column = (i: 1 | 2 | 3) => {
    const values = entries.map(([, s]) => s[i]);
    return values.every((v) => v === null)
      ? amounts(spec.pegType, null, spec.missingAs)
      : { [spec.pegType]: sumOf(values) };
  };
  return {
    id: spec.id,
    name: spec.name,
    symbol: spec.symbol,
    gecko_id: spec.gecko_id,
    pegType: spec.pegType,
    priceSource: 'defillama',
    pegMechanism: spec.pegMechanism,
    circulating: { [spec.pegType]: sumOf(entries.map(([, s]) => s[0])) },
    circulatingPrevDay: column(1),
    circulatingPrevWeek: column(2),
    circulatingPrevMonth: column(3),
    chainCirculating: Object.fromEntries(
      entries.map(([chain, [now, day, week, month]]) => [
        chain,
        {
          current: { [spec.pegType]: now },
          circulatingPrevDay: amounts(spec.pegType, day, spec.missingAs),
          circulatingPrevWeek: amounts(spec.pegType, week, spec.missingAs),
          circulatingPrevMonth: amounts(spec.pegType, month, spec.missingAs),
        },
      ]),
    ),
    chains: entries.map(([chain]) => chain),
    price: spec.price,
  };
}

/** The `chains` totals as the upstream computes them: supply × price, falling back to 1 for USD pegs and 0 otherwise. */
export function chainTotals(
  specs: readonly CoinSpec[],
): Array<{ name: string; totalCirculatingUSD: Record<string, number> }> {
  const totals = new Map<string, Record<string, number>>();
  for (const spec of specs) {
    const price = spec.price ?? (spec.pegType === 'peggedUSD' ? 1 : 0);
    for (const [chain, [now]] of Object.entries(spec.chains)) {
      const row = totals.get(chain) ?? {};
      row[spec.pegType] = (row[spec.pegType] ?? 0) + now * price;
      totals.set(chain, row);
    }
  }
  return [...totals].map(([name, totalCirculatingUSD]) => ({ name, totalCirculatingUSD }));
}

/** The whole `/stablecoins` body for a fixture, assets sorted by circulation as upstream. */
export function stablecoinsBody(specs: readonly CoinSpec[]): {
  peggedAssets: Array<Record<string, unknown>>;
  chains: ReturnType<typeof chainTotals>;
} {
  const total = (s: CoinSpec) => sumOf(Object.values(s.chains).map((c) => c[0]));
  return { peggedAssets: [...specs].sort((a, b) => total(b) - total(a)).map(peggedAsset), chains: chainTotals(specs) };
}

/** Options of the stablecoins look-alike. */
export interface StablecoinsLookalikeOptions extends LookalikeOptions {
  coins?: CoinSpec[];
  fx?: Record<string, number>;
}

/** Starts the DefiLlama stablecoins look-alike on 127.0.0.1. */
export function startStablecoinsLookalike(options: StablecoinsLookalikeOptions = {}): Promise<Lookalike> {
  const body = stablecoinsBody(options.coins ?? STABLECOIN_FIXTURE);
  const day = Math.floor(Date.now() / 86_400_000) * 86_400;
  const fx = options.fx ?? FX_FIXTURE;
  const older = Object.fromEntries(Object.entries(fx).map(([c, v]) => [c, c === 'USD' ? 1 : v * 1.01]));
  const rates = [
    { date: day - 86_400, rates: older },
    { date: day, rates: fx },
  ];
  return startLookalikeServer((req, mode): LookalikeReply => {
    if (req.method !== 'GET') return { status: 404, text: 'Invalid request' };
    if (mode === 'error200') return { json: { error: 'Internal server error' } };
    switch (req.path) {
      case '/stablecoins':
        if (mode === 'empty') return { json: { peggedAssets: [], chains: [] } };
        if (mode === 'mismatch')
          return {
            json: {
              ...body,
              peggedAssets: body.peggedAssets.map((a) => ({
                ...a,
                circulating: Object.fromEntries(
                  Object.entries(a.circulating as object).map(([k, v]) => [k, String(v)]),
                ),
              })),
            },
          };
        return { json: body };
      case '/stablecoinchains':
        return { json: body.chains };
      case '/rates':
        if (mode === 'empty') return { json: [] };
        if (mode === 'mismatch') return { json: { rates: fx } };
        return { json: rates };
      default:
        return { status: 404, text: 'Invalid request' };
    }
  }, options);
}
