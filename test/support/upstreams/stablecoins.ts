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

const B = 1e9;
const M = 1e6;

/** The default fixture: real names and ids, made-up amounts of a realistic order. */
export const STABLECOIN_FIXTURE: CoinSpec[] = [
  {
    id: '1',
    name: 'Tether',
    symbol: 'USDT',
    gecko_id: 'tether',
    pegType: 'peggedUSD',
    pegMechanism: 'fiat-backed',
    price: 1.0002,
    chains: {
      Tron: [80.1 * B, 79.8 * B, 78.9 * B, 75.2 * B],
      Ethereum: [72.4 * B, 72.0 * B, 71.1 * B, 69.0 * B],
      BSC: [6.3 * B, 6.3 * B, 6.2 * B, 5.9 * B],
      Solana: [2.4 * B, 2.41 * B, 2.5 * B, 2.2 * B],
      Arbitrum: [1.1 * B, 1.1 * B, 1.05 * B, 0.98 * B],
      'Hyperliquid L1': [0.52 * B, 0.5 * B, 0.41 * B, null],
    },
  },
  {
    id: '2',
    name: 'USD Coin',
    symbol: 'USDC',
    gecko_id: 'usd-coin',
    pegType: 'peggedUSD',
    pegMechanism: 'fiat-backed',
    price: 0.9998,
    chains: {
      Ethereum: [46.1 * B, 45.9 * B, 45.2 * B, 46.6 * B],
      Solana: [9.02 * B, 8.9 * B, 8.7 * B, 8.8 * B],
      Base: [4.1 * B, 4.05 * B, 3.95 * B, 3.7 * B],
      Arbitrum: [2.61 * B, 2.6 * B, 2.55 * B, 2.7 * B],
      Polygon: [0.94 * B, 0.95 * B, 0.96 * B, 0.99 * B],
      Avalanche: [0.71 * B, 0.7 * B, 0.72 * B, 0.75 * B],
    },
  },
  {
    id: '146',
    name: 'Ethena USDe',
    symbol: 'USDe',
    gecko_id: 'ethena-usde',
    pegType: 'peggedUSD',
    pegMechanism: 'crypto-backed',
    price: 1.0005,
    chains: {
      Ethereum: [13.6 * B, 13.4 * B, 12.9 * B, 11.8 * B],
      Arbitrum: [0.21 * B, 0.2 * B, 0.19 * B, 0.15 * B],
      Base: [0.08 * B, 0.08 * B, 0.07 * B, 0.05 * B],
    },
  },
  {
    id: '209',
    name: 'Sky Dollar',
    symbol: 'USDS',
    gecko_id: 'usds',
    pegType: 'peggedUSD',
    pegMechanism: 'crypto-backed',
    price: 1.0001,
    chains: {
      Ethereum: [7.9 * B, 7.85 * B, 7.7 * B, 7.1 * B],
      Base: [0.24 * B, 0.24 * B, 0.23 * B, 0.2 * B],
      Solana: [0.03 * B, 0.03 * B, 0.03 * B, 0.02 * B],
    },
  },
  {
    id: '5',
    name: 'Dai',
    symbol: 'DAI',
    gecko_id: 'dai',
    pegType: 'peggedUSD',
    pegMechanism: 'crypto-backed',
    price: 0.9999,
    chains: {
      Ethereum: [4.9 * B, 4.95 * B, 5.0 * B, 5.2 * B],
      Polygon: [0.12 * B, 0.12 * B, 0.12 * B, 0.13 * B],
      BSC: [0.09 * B, 0.09 * B, 0.09 * B, 0.1 * B],
      Base: [0.05 * B, 0.05 * B, 0.05 * B, 0.05 * B],
    },
  },
  {
    id: '119',
    name: 'First Digital USD',
    symbol: 'FDUSD',
    gecko_id: 'first-digital-usd',
    pegType: 'peggedUSD',
    pegMechanism: 'fiat-backed',
    price: 0.9981,
    chains: {
      BSC: [1.31 * B, 1.35 * B, 1.42 * B, 1.6 * B],
      Ethereum: [0.4 * B, 0.41 * B, 0.43 * B, 0.5 * B],
      Sui: [0.02 * B, 0.02 * B, 0.02 * B, 0.01 * B],
    },
  },
  {
    id: '120',
    name: 'PayPal USD',
    symbol: 'PYUSD',
    gecko_id: 'paypal-usd',
    pegType: 'peggedUSD',
    pegMechanism: 'fiat-backed',
    price: 1.0,
    chains: { Ethereum: [0.62 * B, 0.61 * B, 0.6 * B, 0.55 * B], Solana: [0.41 * B, 0.4 * B, 0.37 * B, 0.3 * B] },
  },
  {
    id: '223',
    name: 'Global Dollar',
    symbol: 'USDG',
    gecko_id: 'global-dollar',
    pegType: 'peggedUSD',
    pegMechanism: 'fiat-backed',
    price: 1.0,
    chains: {
      Ethereum: [0.31 * B, null, null, null],
      Solana: [0.09 * B, null, null, null],
      'Robinhood Chain': [0.02 * B, null, null, null],
    },
  },
  {
    id: '3',
    name: 'TerraClassicUSD',
    symbol: 'USTC',
    gecko_id: 'terrausd',
    pegType: 'peggedUSD',
    pegMechanism: 'algorithmic',
    price: 0.0142,
    chains: { 'Terra Classic': [9.62 * B, 9.62 * B, 9.63 * B, 9.65 * B], Ethereum: [0.001 * B, null, null, null] },
    missingAs: 'zero',
  },
  {
    id: '192',
    name: 'Bucket USD',
    symbol: 'BUCK',
    gecko_id: 'bucket-protocol-buck-stablecoin',
    pegType: 'peggedUSD',
    pegMechanism: 'crypto-backed',
    price: null,
    chains: { Sui: [55 * M, 54 * M, null, 60 * M] },
  },
  {
    id: '50',
    name: 'EURC',
    symbol: 'EURC',
    gecko_id: 'euro-coin',
    pegType: 'peggedEUR',
    pegMechanism: 'fiat-backed',
    price: 1.0855,
    chains: {
      Ethereum: [180 * M, 178 * M, 171 * M, 150 * M],
      Solana: [38 * M, 37 * M, 35 * M, 30 * M],
      Base: [12 * M, 12 * M, 11 * M, 9 * M],
      Avalanche: [4 * M, 4 * M, 4 * M, 4 * M],
    },
  },
  {
    id: '52',
    name: 'STASIS EURO',
    symbol: 'EURS',
    gecko_id: 'stasis-eurs',
    pegType: 'peggedEUR',
    pegMechanism: 'fiat-backed',
    price: 1.0712,
    chains: { Ethereum: [131 * M, 131 * M, 131 * M, 133 * M], Polygon: [1.2 * M, 1.2 * M, 1.2 * M, 1.1 * M] },
  },
  {
    id: '101',
    name: 'Monerium EUR emoney',
    symbol: 'EURe',
    gecko_id: 'monerium-eur-money',
    pegType: 'peggedEUR',
    pegMechanism: 'fiat-backed',
    price: null,
    chains: { Gnosis: [28 * M, 27 * M, 26 * M, 22 * M], Ethereum: [6 * M, 6 * M, 6 * M, 5 * M] },
  },
  {
    id: '137',
    name: 'JPY Coin',
    symbol: 'JPYC',
    gecko_id: 'jpyc',
    pegType: 'peggedJPY',
    pegMechanism: 'fiat-backed',
    price: 0.00671,
    chains: { Polygon: [1.05 * B, 1.04 * B, 1.0 * B, 0.9 * B], Ethereum: [0.2 * B, 0.2 * B, 0.2 * B, 0.19 * B] },
  },
  {
    id: '97',
    name: 'Poundtoken',
    symbol: 'GBPT',
    gecko_id: 'poundtoken',
    pegType: 'peggedGBP',
    pegMechanism: 'fiat-backed',
    price: 1.2644,
    chains: { Ethereum: [1.5 * M, 1.5 * M, 1.5 * M, 1.6 * M] },
  },
  {
    id: '58',
    name: 'CryptoFranc',
    symbol: 'XCHF',
    gecko_id: 'cryptofranc',
    pegType: 'peggedCHF',
    pegMechanism: 'fiat-backed',
    price: 1.1302,
    chains: { Ethereum: [6.1 * M, 6.1 * M, 6.0 * M, 6.2 * M] },
  },
  {
    id: '65',
    name: 'Frax Price Index',
    symbol: 'FPI',
    gecko_id: 'frax-price-index',
    pegType: 'peggedVAR',
    pegMechanism: 'crypto-backed',
    price: 1.1107,
    chains: { Ethereum: [63 * M, 63 * M, 62 * M, 61 * M], Arbitrum: [2 * M, 2 * M, 2 * M, 2 * M] },
  },
];

/** Units of each currency per US dollar, newest snapshot (openexchangerates form, as `/rates` serves it). */
export const FX_FIXTURE: Record<string, number> = { USD: 1, EUR: 0.9213, JPY: 148.72, GBP: 0.7906, CHF: 0.8841 };

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
