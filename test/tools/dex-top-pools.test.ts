import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { ToolError } from '../../src/shared/errors.js';
import { silentLogger } from '../../src/shared/log.js';
import { createProviders } from '../../src/providers/index.js';
import { dexTopPools } from '../../tools/dex-top-pools.js';
import { testContext } from '../support/context.js';
import type { Lookalike } from '../support/upstreams/server.js';
import { generatePools, startYieldsLookalike, type PoolRow } from '../support/upstreams/yields.js';

const POOLS = generatePools(5_000, 11);
let lookalike: Lookalike;
beforeAll(async () => {
  lookalike = await startYieldsLookalike({ pools: POOLS });
});
afterAll(async () => {
  await lookalike?.stop();
});

const providers = () =>
  createProviders(loadConfig({ DEFILLAMA_YIELDS_URL: lookalike.url, LOG_LEVEL: 'silent' }), silentLogger);
let shared: ReturnType<typeof providers> | undefined;

async function call(body: unknown) {
  const result = await dexTopPools.handler(
    dexTopPools.input.parse(body),
    testContext({ providers: (shared ??= providers()) }),
  );
  return dexTopPools.output.parse(result);
}

async function refusal(body: unknown): Promise<ToolError> {
  const err = await call(body).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolError);
  return err as ToolError;
}

/** The reference answer, straight from the fixture: liquidity pools with an APY, filtered, sorted by TVL. */
function expected(filter: (p: PoolRow) => boolean, limit: number): string[] {
  return POOLS.filter((p) => p.exposure === 'multi' && (p.apy ?? p.apyBase ?? p.apyReward) !== null && filter(p))
    .sort((a, b) => b.tvlUsd - a.tvlUsd || a.pool.localeCompare(b.pool))
    .slice(0, limit)
    .map((p) => p.pool);
}

describe('dex-top-pools', () => {
  it('returns the 10 largest liquidity pools across all chains by default', async () => {
    const out = await call({});
    expect(out).toMatchObject({ source: 'DefiLlama yields API', chain: 'all', project: 'all', count: 10 });
    expect(out.pools.map((p) => p.pool)).toEqual(expected(() => true, 10));
  });

  it('maps each pool to its identifier, chain, project, symbol, whole-dollar TVL and APY', async () => {
    const out = await call({ limit: 50 });
    for (const row of out.pools) {
      const source = POOLS.find((p) => p.pool === row.pool)!;
      expect(row).toEqual({
        pool: source.pool,
        chain: source.chain,
        project: source.project,
        symbol: source.symbol,
        tvlUsd: Math.round(source.tvlUsd),
        apy: source.apy ?? (source.apyBase ?? 0) + (source.apyReward ?? 0),
      });
      expect(Number.isInteger(row.tvlUsd)).toBe(true);
    }
  });

  it('filters by chain case-insensitively and reports the chain as the source spells it', async () => {
    const out = await call({ chain: 'ARBITRUM', limit: 25 });
    expect(out.chain).toBe('Arbitrum');
    expect(out.pools.every((p) => p.chain === 'Arbitrum')).toBe(true);
    expect(out.pools.map((p) => p.pool)).toEqual(expected((p) => p.chain === 'Arbitrum', 25));
  });

  it('matches the chain exactly, not as a substring', async () => {
    const out = await call({ chain: 'hyperliquid l1', limit: 50 });
    expect(out.pools.every((p) => p.chain === 'Hyperliquid L1')).toBe(true);
    expect((await refusal({ chain: 'hyper' })).field).toBe('chain');
  });

  it('filters by a case-insensitive substring of the project slug', async () => {
    const out = await call({ project: 'UNISWAP', limit: 50 });
    const projects = new Set(out.pools.map((p) => p.project));
    expect([...projects].every((p) => p.startsWith('uniswap-'))).toBe(true);
    expect(projects.size).toBeGreaterThan(1);
    expect(out.project).toBe('UNISWAP');
    expect(out.pools.map((p) => p.pool)).toEqual(expected((p) => p.project.includes('uniswap'), 50));
  });

  it('combines chain and project filters', async () => {
    const out = await call({ chain: 'base', project: 'aerodrome', limit: 5 });
    expect(out.pools.map((p) => p.pool)).toEqual(
      expected((p) => p.chain === 'Base' && p.project.includes('aerodrome'), 5),
    );
  });

  it('never lists single-token lending or staking positions', async () => {
    const err = await refusal({ project: 'aave' });
    expect(err).toMatchObject({ code: 'not_found', field: 'project' });
  });

  it('honours limit 1 and 50 and refuses 0 and 51 at the boundary', async () => {
    expect((await call({ limit: 1 })).count).toBe(1);
    expect((await call({ limit: 50 })).pools).toHaveLength(50);
    expect(dexTopPools.input.safeParse({ limit: 0 }).success).toBe(false);
    expect(dexTopPools.input.safeParse({ limit: 51 }).success).toBe(false);
  });

  it('returns fewer than limit when fewer pools match', async () => {
    const sizes = new Map<string, number>();
    for (const p of POOLS)
      if (p.exposure === 'multi') sizes.set(`${p.chain}|${p.project}`, (sizes.get(`${p.chain}|${p.project}`) ?? 0) + 1);
    const [chain, project] = [...sizes].find(([, n]) => n > 1 && n < 20)![0].split('|') as [string, string];
    const few = expected((p) => p.chain === chain && p.project.includes(project), 50);
    const out = await call({ chain, project, limit: 50 });
    expect(out.count).toBe(few.length);
    expect(out.count).toBeLessThan(50);
    expect(out.pools.map((p) => p.pool)).toEqual(few);
  });

  it('answers an unknown chain with not_found naming the largest chains', async () => {
    const err = await refusal({ chain: 'Etherium' });
    expect(err).toMatchObject({ code: 'not_found', field: 'chain' });
    expect(err.message).toMatch(/Ethereum/);
  });

  it('answers a project that matches nothing with not_found naming the largest projects there', async () => {
    const err = await refusal({ chain: 'Base', project: 'no-such-dex' });
    expect(err.message).toMatch(/no-such-dex.*Base/);
    expect(err.message).toMatch(
      /uniswap|aerodrome|curve|balancer|pancakeswap|sushiswap|camelot|velodrome|trader-joe|quickswap|cetus|raydium|orca|meteora/,
    );
  });

  it('fetches the pool list once for many calls', async () => {
    const own = providers();
    const before = lookalike.requests;
    for (const chain of ['Ethereum', 'Base', 'BSC']) {
      await dexTopPools.handler(dexTopPools.input.parse({ chain }), testContext({ providers: own }));
    }
    expect(lookalike.requests).toBe(before + 1);
  });
});
