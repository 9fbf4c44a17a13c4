import { z } from 'zod';
import { ToolError } from '../../shared/errors.js';
import type { Fetched, Upstream } from '../upstream.js';

/** The fields of one `/pools` row we read (the upstream sends 28; the rest are dropped on the way in). */
const PoolSchema = z.object({
  pool: z.string().min(1),
  chain: z.string(),
  project: z.string(),
  symbol: z.string(),
  tvlUsd: z.number().nullable(),
  apy: z.number().nullable().optional(),
  apyBase: z.number().nullable().optional(),
  apyReward: z.number().nullable().optional(),
  exposure: z.string().nullable().optional(),
});

/** One liquidity pool as the tool returns it. */
export interface LiquidityPool {
  pool: string;
  chain: string;
  project: string;
  symbol: string;
  /** Whole US dollars. */
  tvlUsd: number;
  /** Total APY in percent. */
  apy: number;
}

/** A pool with its lower-cased keys, precomputed once per fetch so a call only compares strings. */
export interface RankedPool {
  row: LiquidityPool;
  chainKey: string;
  projectKey: string;
}

/** The pool list, normalised and ranked once when it is fetched (the cached value). */
export interface PoolRanking {
  /** Multi-asset liquidity pools with a known TVL and APY, largest TVL first. */
  pools: RankedPool[];
  /** Rows the upstream sent, before keeping liquidity pools only. */
  upstreamRows: number;
  /** Lower-cased chain name → the name as the upstream writes it. */
  chainLabels: Map<string, string>;
  /** Chain names by total TVL of their pools, largest first (examples for error messages). */
  chainsByTvl: string[];
}

/**
 * The APY of a row: the upstream's total `apy`, else base plus reward where either is known; null when none is.
 * A pool without any APY figure is left out rather than shown with an invented 0.
 */
function totalApy(p: z.output<typeof PoolSchema>): number | null {
  if (typeof p.apy === 'number') return p.apy;
  if (typeof p.apyBase === 'number' || typeof p.apyReward === 'number') return (p.apyBase ?? 0) + (p.apyReward ?? 0);
  return null;
}

/** Keeps multi-asset pools (exposure `multi`: two or more tokens, i.e. DEX liquidity) with a TVL and an APY, ranked by TVL. */
export function rankPools(rows: ReadonlyArray<z.output<typeof PoolSchema>>): PoolRanking {
  const pools: RankedPool[] = [];
  const chainTvl = new Map<string, { label: string; tvl: number }>();
  for (const p of rows) {
    if (p.exposure !== 'multi' || typeof p.tvlUsd !== 'number' || !Number.isFinite(p.tvlUsd)) continue;
    const apy = totalApy(p);
    if (apy === null) continue;
    const chainKey = p.chain.toLowerCase();
    pools.push({
      row: { pool: p.pool, chain: p.chain, project: p.project, symbol: p.symbol, tvlUsd: Math.round(p.tvlUsd), apy },
      chainKey,
      projectKey: p.project.toLowerCase(),
    });
    const chain = chainTvl.get(chainKey) ?? { label: p.chain, tvl: 0 };
    chain.tvl += p.tvlUsd;
    chainTvl.set(chainKey, chain);
  }
  pools.sort((a, b) => b.row.tvlUsd - a.row.tvlUsd || a.row.pool.localeCompare(b.row.pool));
  return {
    pools,
    upstreamRows: rows.length,
    chainLabels: new Map([...chainTvl].map(([key, c]) => [key, c.label])),
    chainsByTvl: [...chainTvl.values()].sort((a, b) => b.tvl - a.tvl).map((c) => c.label),
  };
}

/** `GET /pools`: `{status: "success", data: [...]}`, validated and ranked once per fetch. */
const PoolsResponseSchema = z
  .object({ status: z.string().optional(), data: z.array(PoolSchema) })
  .transform((body) => rankPools(body.data));

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Liquidity pools from the DefiLlama yields API. */
export interface YieldsProvider {
  /** Name of the upstream, for `source` fields. */
  readonly source: string;
  /** Every liquidity pool, ranked by TVL (one ~20k-row upstream fetch, cached for the upstream's TTL). */
  pools(signal?: AbortSignal): Promise<Fetched<PoolRanking>>;
}

/** Creates the yields provider on its upstream client. */
export function createYieldsProvider(upstream: Upstream): YieldsProvider {
  const label = upstream.info.label;
  const failed = (what: string) =>
    new ToolError('upstream_unavailable', `The ${label} ${what}. Try again in a minute.`);
  return {
    source: label,
    pools(signal) {
      return upstream.request({
        path: '/pools',
        schema: PoolsResponseSchema,
        // Errors in disguise (a 200 whose status is not "success") and empty lists never reach the cache.
        interpret: (status, json) => {
          if (status !== 200 || !isObject(json)) return undefined;
          if (typeof json.status === 'string' && json.status !== 'success')
            return failed(`reported an error (status "${json.status.slice(0, 40)}")`);
          if (Array.isArray(json.data) && json.data.length === 0) return failed('returned an empty pool list');
          return undefined;
        },
        ...(signal ? { signal } : {}),
      });
    },
  };
}
