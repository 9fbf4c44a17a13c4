import { TOKENS } from './goplus.js';
import { startLookalikeServer, type Lookalike, type LookalikeOptions } from './server.js';

/**
 * A look-alike of the DexScreener token API (/work/shared/docs/upstream-apis.md §6.3, §13):
 * `GET /latest/dex/tokens/{addresses}` (1–30 comma-separated, any chain) answers `{schemaVersion: "1.0.0", pairs: [...]}`
 * with every pair in which one of the tokens is the base or the quote token; EVM addresses match in any case, Solana
 * mints exactly. An unknown or unindexed token is HTTP 200 `{"pairs": null}`. Some pairs have no `liquidity` or no
 * `pairCreatedAt`, one fixture token also trades on another chain under the same address.
 * Handler failure modes: `error200` = `pairs: null` for any token (its unindexed habit), `empty` = `pairs: []`,
 * `mismatch` = `pairs` as an object keyed by pair address.
 */

const DAY = 86_400_000;
const WETH_BASE = '0x4200000000000000000000000000000000000006';
const USDC_BASE = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const WETH_ETH = '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2';
const WSOL = 'So11111111111111111111111111111111111111112';

/** One fixture pair, compactly. */
export interface PairSpec {
  chainId: string;
  dexId: string;
  pairAddress: string;
  base: { address: string; name: string; symbol: string };
  quote: { address: string; name: string; symbol: string };
  liquidityUsd?: number;
  /** Age of the pair in days at request time; undefined = no `pairCreatedAt`. */
  ageDays?: number;
}

const exm = { address: TOKENS.clean, name: 'Example', symbol: 'EXM' };
const weth = { address: WETH_BASE, name: 'Wrapped Ether', symbol: 'WETH' };
const pairHex = (i: number) => `0x${i.toString(16).padStart(40, '0')}`;

/** The pairs the look-alike indexes. */
export const PAIRS: PairSpec[] = [
  {
    chainId: 'base',
    dexId: 'uniswap',
    pairAddress: pairHex(0x1001),
    base: exm,
    quote: weth,
    liquidityUsd: 185000.12,
    ageDays: 400,
  },
  {
    chainId: 'base',
    dexId: 'aerodrome',
    pairAddress: pairHex(0x1002),
    base: { address: USDC_BASE, name: 'USD Coin', symbol: 'USDC' },
    quote: exm,
    liquidityUsd: 42000.5,
    ageDays: 120,
  },
  { chainId: 'base', dexId: 'baseswap', pairAddress: pairHex(0x1003), base: exm, quote: weth },
  {
    chainId: 'ethereum',
    dexId: 'uniswap',
    pairAddress: pairHex(0x1004),
    base: exm,
    quote: { address: WETH_ETH, name: 'Wrapped Ether', symbol: 'WETH' },
    liquidityUsd: 999999,
    ageDays: 700,
  },
  {
    chainId: 'base',
    dexId: 'uniswap',
    pairAddress: pairHex(0x2001),
    base: { address: TOKENS.honeypot, name: 'SafeRocket', symbol: 'SRKT' },
    quote: weth,
    liquidityUsd: 3500,
    ageDays: 2,
  },
  {
    chainId: 'ethereum',
    dexId: 'uniswap',
    pairAddress: pairHex(0x3001),
    base: { address: TOKENS.risky, name: 'Mintable Dollar', symbol: 'MDLR' },
    quote: { address: WETH_ETH, name: 'Wrapped Ether', symbol: 'WETH' },
    liquidityUsd: 50000,
    ageDays: 30,
  },
  {
    chainId: 'solana',
    dexId: 'raydium',
    pairAddress: 'PooL1111111111111111111111111111111111111111',
    base: { address: TOKENS.solClean, name: 'Bonkish', symbol: 'BONKS' },
    quote: { address: WSOL, name: 'Wrapped SOL', symbol: 'SOL' },
    liquidityUsd: 1200000,
    ageDays: 500,
  },
  {
    chainId: 'solana',
    dexId: 'orca',
    pairAddress: 'PooL2222222222222222222222222222222222222222',
    base: { address: TOKENS.solClean, name: 'Bonkish', symbol: 'BONKS' },
    quote: { address: WSOL, name: 'Wrapped SOL', symbol: 'SOL' },
    liquidityUsd: 300000,
    ageDays: 200,
  },
  {
    chainId: 'solana',
    dexId: 'raydium',
    pairAddress: 'PooL3333333333333333333333333333333333333333',
    base: { address: TOKENS.solRisky, name: 'Freeze Cat', symbol: 'FCAT' },
    quote: { address: WSOL, name: 'Wrapped SOL', symbol: 'SOL' },
    liquidityUsd: 20000,
    ageDays: 3,
  },
];

function pairJson(p: PairSpec, now: number): Record<string, unknown> {
  return {
    chainId: p.chainId,
    dexId: p.dexId,
    url: `https://dexscreener.com/${p.chainId}/${p.pairAddress.toLowerCase()}`,
    pairAddress: p.pairAddress,
    labels: ['v2'],
    baseToken: p.base,
    quoteToken: p.quote,
    priceNative: '0.0000123',
    priceUsd: '0.0531',
    txns: {
      m5: { buys: 3, sells: 1 },
      h1: { buys: 40, sells: 22 },
      h6: { buys: 210, sells: 190 },
      h24: { buys: 900, sells: 850 },
    },
    volume: { h24: 210000.5, h6: 50000, h1: 9000, m5: 120 },
    priceChange: { m5: 0.1, h1: -1.2, h6: 3.4, h24: -5.5 },
    ...(p.liquidityUsd === undefined ? {} : { liquidity: { usd: p.liquidityUsd, base: 1740000, quote: 21.4 } }),
    fdv: 53100000,
    marketCap: 41000000,
    ...(p.ageDays === undefined ? {} : { pairCreatedAt: now - p.ageDays * DAY }),
    info: { imageUrl: 'https://example.org/token.png', websites: [], socials: [] },
    boosts: { active: 0 },
  };
}

/** Options of the DexScreener look-alike. */
export interface DexScreenerLookalikeOptions extends LookalikeOptions {
  /** Clock used for `pairCreatedAt`; default Date.now. */
  now?: () => number;
}

/** Starts the DexScreener look-alike with the fixture above. */
export function startDexScreenerLookalike(options: DexScreenerLookalikeOptions = {}): Promise<Lookalike> {
  const now = options.now ?? Date.now;
  return startLookalikeServer((req, mode) => {
    const match = /^\/latest\/dex\/tokens\/([^/]+)$/.exec(req.path);
    if (!match) return { status: 404, json: { error: 'Not Found' } };
    const wanted = decodeURIComponent(match[1]!)
      .split(',')
      .slice(0, 30)
      .map((a) => a.trim());
    const same = (a: string, b: string) => (a.startsWith('0x') ? a.toLowerCase() === b.toLowerCase() : a === b);
    const found = PAIRS.filter((p) => wanted.some((w) => same(p.base.address, w) || same(p.quote.address, w)));
    if (mode === 'error200' || found.length === 0) return { json: { schemaVersion: '1.0.0', pairs: null } };
    if (mode === 'empty') return { json: { schemaVersion: '1.0.0', pairs: [] } };
    const pairs = found.map((p) => pairJson(p, now()));
    if (mode === 'mismatch')
      return { json: { schemaVersion: '1.0.0', pairs: Object.fromEntries(pairs.map((p) => [p.pairAddress, p])) } };
    return { json: { schemaVersion: '1.0.0', pairs } };
  }, options);
}
