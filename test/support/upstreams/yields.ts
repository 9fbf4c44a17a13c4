import { startLookalikeServer, type Lookalike, type LookalikeOptions, type LookalikeReply } from './server.js';

/**
 * A look-alike of the DefiLlama yields API (/work/shared/docs/upstream-apis.md §3, §13): `GET /pools` answers
 * `{"status":"success","data":[...]}` with about 20k generated pools of exactly the 28 documented keys, sorted by
 * `tvlUsd` descending, numbers rounded to 5 dp, nullable fields null where the upstream leaves them empty, DEX
 * projects with `exposure: "multi"` next to lending/staking projects with `"single"`, and a few rows without an
 * `apy` (one with base APY only, one with no APY at all). Other routes → 404 `Invalid request`.
 * Handler failure modes: `error200` = `{"status":"error"}` with HTTP 200, `empty` = no pools, `mismatch` = TVL as strings.
 */

/** One `/pools` row with its 28 keys. */
export interface PoolRow {
  chain: string;
  project: string;
  symbol: string;
  tvlUsd: number;
  apyBase: number | null;
  apyReward: number | null;
  apy: number | null;
  rewardTokens: string[] | null;
  pool: string;
  apyPct1D: number | null;
  apyPct7D: number | null;
  apyPct30D: number | null;
  stablecoin: boolean;
  ilRisk: 'yes' | 'no';
  exposure: 'single' | 'multi';
  predictions: { predictedClass: string | null; predictedProbability: number | null; binnedConfidence: number | null };
  poolMeta: string | null;
  mu: number | null;
  sigma: number | null;
  count: number | null;
  outlier: boolean;
  underlyingTokens: string[] | null;
  il7d: number | null;
  apyBase7d: number | null;
  apyMean30d: number | null;
  volumeUsd1d: number | null;
  volumeUsd7d: number | null;
  apyBaseInception: number | null;
}

/** Chains with a weight (share of pools) as on the real list. */
const CHAINS: Array<[string, number]> = [
  ['Ethereum', 22],
  ['Arbitrum', 10],
  ['Base', 12],
  ['BSC', 9],
  ['Solana', 8],
  ['Polygon', 6],
  ['Optimism', 5],
  ['Avalanche', 4],
  ['Sui', 3],
  ['Aptos', 2],
  ['Hyperliquid L1', 2],
  ['Sonic', 2],
  ['Linea', 2],
  ['Scroll', 1],
  ['Blast', 1],
  ['Mantle', 1],
  ['zkSync Era', 1],
  ['Gnosis', 1],
  ['Celo', 1],
  ['Fantom', 1],
  ['Cronos', 1],
  ['Tron', 1],
  ['Near', 1],
  ['Ton', 1],
];

/** Projects: DEXes (multi-token pools) and lending/staking/yield projects (single-token positions). */
const DEX = [
  'uniswap-v3',
  'uniswap-v2',
  'uniswap-v4',
  'aerodrome-slipstream',
  'aerodrome-v1',
  'curve-dex',
  'balancer-v2',
  'pancakeswap-amm-v3',
  'pancakeswap-amm',
  'raydium-amm',
  'orca-dex',
  'meteora-dlmm',
  'sushiswap',
  'camelot-v3',
  'velodrome-v2',
  'trader-joe-dex',
  'quickswap-dex',
  'cetus-amm',
];
const SINGLE = [
  'aave-v3',
  'compound-v3',
  'lido',
  'morpho-blue',
  'pendle',
  'spark',
  'euler-v2',
  'fluid-lending',
  'kamino-lend',
  'venus-core-pool',
  'yearn-finance',
  'beefy',
];
const TOKENS = [
  'WETH',
  'USDC',
  'USDT',
  'WBTC',
  'DAI',
  'USDE',
  'WSTETH',
  'CBBTC',
  'SOL',
  'ARB',
  'OP',
  'AERO',
  'CRV',
  'PENDLE',
  'LINK',
  'UNI',
  'FRAX',
  'GHO',
  'EURC',
  'CAKE',
  'BNB',
  'AVAX',
  'SUI',
  'HYPE',
];
const STABLE = new Set(['USDC', 'USDT', 'DAI', 'USDE', 'FRAX', 'GHO', 'EURC']);

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const round5 = (x: number) => Math.round(x * 1e5) / 1e5;

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function weighted(random: () => number): string {
  const total = CHAINS.reduce((s, [, w]) => s + w, 0);
  let r = random() * total;
  for (const [name, w] of CHAINS) {
    r -= w;
    if (r < 0) return name;
  }
  return CHAINS[0]![0];
}

function uuid(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const address = (random: () => number) =>
  `0x${Array.from({ length: 40 }, () => Math.floor(random() * 16).toString(16)).join('')}`;

/** Generates `count` pools deterministically (same seed, same list), sorted by TVL descending as the upstream sends them. */
export function generatePools(count = 20_000, seed = 42): PoolRow[] {
  const random = rng(seed);
  const rows: PoolRow[] = [];
  for (let i = 0; i < count; i++) {
    const multi = random() < 0.62;
    const project = multi ? pick(random, DEX) : pick(random, SINGLE);
    const a = pick(random, TOKENS);
    let b = pick(random, TOKENS);
    if (b === a) b = a === 'USDC' ? 'WETH' : 'USDC';
    const symbol = multi ? `${a}-${b}` : a;
    // Log-uniform TVL from $1k to ~$5B: few giants, a long tail.
    const tvlUsd = Math.round(10 ** (3 + 6.7 * random() ** 2.2));
    const apyBase = round5(random() * (multi ? 40 : 9));
    const rewarded = random() < 0.3;
    const apyReward = rewarded ? round5(random() * 15) : null;
    const apy = round5(apyBase + (apyReward ?? 0));
    const stablecoin = multi ? STABLE.has(a) && STABLE.has(b) : STABLE.has(a);
    rows.push({
      chain: weighted(random),
      project,
      symbol,
      tvlUsd,
      apyBase,
      apyReward,
      apy,
      rewardTokens: rewarded ? [address(random)] : null,
      pool: uuid(random),
      apyPct1D: round5((random() - 0.5) * 2),
      apyPct7D: round5((random() - 0.5) * 5),
      apyPct30D: random() < 0.1 ? null : round5((random() - 0.5) * 10),
      stablecoin,
      ilRisk: multi && !stablecoin ? 'yes' : 'no',
      exposure: multi ? 'multi' : 'single',
      predictions: {
        predictedClass: pick(random, ['Stable/Up', 'Down', null]),
        predictedProbability: Math.round(random() * 100),
        binnedConfidence: Math.ceil(random() * 3),
      },
      poolMeta: random() < 0.2 ? pick(random, ['0.05%', '0.3%', '1%', 'Stable Pool', '7 days lock']) : null,
      mu: round5(apy * (0.8 + random() * 0.4)),
      sigma: round5(random()),
      count: Math.floor(random() * 1000),
      outlier: random() < 0.01,
      underlyingTokens: multi ? [address(random), address(random)] : [address(random)],
      il7d: multi ? round5(random() * -2) : null,
      apyBase7d: random() < 0.5 ? round5(apyBase * (0.9 + random() * 0.2)) : null,
      apyMean30d: round5(apy * (0.8 + random() * 0.4)),
      volumeUsd1d: multi ? Math.round(tvlUsd * random() * 0.5) : null,
      volumeUsd7d: multi ? Math.round(tvlUsd * random() * 3) : null,
      apyBaseInception: null,
    });
  }
  // Two documented oddities: a pool with only a base APY, and one with no APY at all.
  if (rows.length >= 4) {
    Object.assign(rows[1]!, { exposure: 'multi', apy: null, apyReward: null, apyBase: 3.21 });
    Object.assign(rows[3]!, { exposure: 'multi', apy: null, apyReward: null, apyBase: null });
  }
  return rows.sort((x, y) => y.tvlUsd - x.tvlUsd);
}

/** Options of the yields look-alike. */
export interface YieldsLookalikeOptions extends LookalikeOptions {
  /** The pool list to serve; default `generatePools(poolCount)`. */
  pools?: PoolRow[];
  /** Pools generated when `pools` is not given; default 20,000. */
  poolCount?: number;
}

/** Starts the DefiLlama yields look-alike on 127.0.0.1 (the ~15 MB body is serialised once). */
export function startYieldsLookalike(options: YieldsLookalikeOptions = {}): Promise<Lookalike> {
  const pools = options.pools ?? generatePools(options.poolCount ?? 20_000);
  const json = { 'content-type': 'application/json' };
  const body = JSON.stringify({ status: 'success', data: pools });
  return startLookalikeServer((req, mode): LookalikeReply => {
    if (req.method !== 'GET' || req.path !== '/pools') return { status: 404, text: 'Invalid request' };
    switch (mode) {
      case 'error200':
        return { json: { status: 'error', message: 'dataset unavailable' } };
      case 'empty':
        return { json: { status: 'success', data: [] } };
      case 'mismatch':
        return {
          json: { status: 'success', data: pools.slice(0, 50).map((p) => ({ ...p, tvlUsd: String(p.tvlUsd) })) },
        };
      case undefined:
        return { text: body, headers: json };
    }
  }, options);
}
