import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { ToolError } from '../../src/shared/errors.js';
import { silentLogger } from '../../src/shared/log.js';
import { createProviders } from '../../src/providers/index.js';
import { stablecoins } from '../../tools/stablecoins.js';
import { testContext } from '../support/context.js';
import type { Lookalike } from '../support/upstreams/server.js';
import {
  FX_FIXTURE,
  STABLECOIN_FIXTURE,
  startStablecoinsLookalike,
  type CoinSpec,
} from '../support/upstreams/stablecoins.js';

let lookalike: Lookalike;
beforeAll(async () => {
  lookalike = await startStablecoinsLookalike();
});
afterAll(async () => {
  await lookalike?.stop();
});

const providers = () =>
  createProviders(loadConfig({ DEFILLAMA_STABLECOINS_URL: lookalike.url, LOG_LEVEL: 'silent' }), silentLogger);
let shared: ReturnType<typeof providers> | undefined;

async function call(body: unknown, ctxProviders = (shared ??= providers())) {
  const result = await stablecoins.handler(stablecoins.input.parse(body), testContext({ providers: ctxProviders }));
  return stablecoins.output.parse(result);
}

async function refusal(body: unknown): Promise<ToolError> {
  const err = await call(body).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolError);
  return err as ToolError;
}

const spec = (symbol: string) => STABLECOIN_FIXTURE.find((c) => c.symbol === symbol)!;
const total = (c: CoinSpec, i: 0 | 1 | 2 | 3 = 0) => Object.values(c.chains).reduce((s, v) => s + (v[i] ?? 0), 0);
const pctChange = (now: number, before: number) => ((now - before) / before) * 100;
const usdPerUnit = (currency: string) => FX_FIXTURE.USD! / FX_FIXTURE[currency]!;

describe('stablecoins', () => {
  it('lists USD-pegged coins by default, ranked by circulation, with the source, fetch time and totals', async () => {
    const out = await call({});
    const usd = STABLECOIN_FIXTURE.filter((c) => c.pegType === 'peggedUSD');
    expect(out.source).toBe('DefiLlama stablecoins API');
    expect(Number.isNaN(Date.parse(out.fetchedAt))).toBe(false);
    expect(out.filters).toEqual({ peg: 'USD', chain: null, search: null, mechanism: null });
    expect(out.matched).toBe(usd.length);
    expect(out.count).toBe(usd.length);
    expect(out.stablecoins.every((r) => r.pegCurrency === 'USD')).toBe(true);
    expect(out.stablecoins.map((r) => r.rank)).toEqual(usd.map((_, i) => i + 1));
    for (let i = 1; i < out.stablecoins.length; i++) {
      expect(out.stablecoins[i - 1]!.circulatingUsd).toBeGreaterThanOrEqual(out.stablecoins[i]!.circulatingUsd);
    }
    expect(out.stablecoins.slice(0, 3).map((r) => r.symbol)).toEqual(['USDT', 'USDC', 'USDe']);
    expect(out.totals.assetCount).toBe(STABLECOIN_FIXTURE.length);
  });

  it('computes supply, USD value, peg deviation and 1d/7d/30d changes from the previous records', async () => {
    const out = await call({ search: 'usd coin' });
    const row = out.stablecoins[0]!;
    const usdc = spec('USDC');
    expect(row).toMatchObject({
      id: '2',
      name: 'USD Coin',
      symbol: 'USDC',
      geckoId: 'usd-coin',
      price: 0.9998,
      pegType: 'peggedUSD',
      pegCurrency: 'USD',
      pegMechanism: 'fiat-backed',
      chainCount: 6,
    });
    expect(row.circulating).toBeCloseTo(total(usdc), 0);
    expect(row.circulatingUsd).toBeCloseTo(total(usdc) * 0.9998, 0);
    expect(row.pegDeviationPct).toBeCloseTo(-0.02, 4);
    expect(row.change1dPct).toBeCloseTo(pctChange(total(usdc), total(usdc, 1)), 4);
    expect(row.change7dPct).toBeCloseTo(pctChange(total(usdc), total(usdc, 2)), 4);
    expect(row.change30dPct).toBeCloseTo(pctChange(total(usdc), total(usdc, 3)), 4);
    expect(row.chains[0]).toEqual({ chain: 'Ethereum', circulating: usdc.chains.Ethereum![0] });
  });

  it('values a USD coin without a price at its peg and leaves its deviation null', async () => {
    const row = (await call({ search: 'BUCK' })).stablecoins[0]!;
    expect(row.price).toBeNull();
    expect(row.pegDeviationPct).toBeNull();
    expect(row.circulatingUsd).toBe(row.circulating);
    expect(row.change7dPct).toBeNull();
    expect(row.change1dPct).toBeCloseTo(pctChange(55e6, 54e6), 4);
  });

  it('leaves changes null for a coin without previous records', async () => {
    const row = (await call({ search: 'global dollar' })).stablecoins[0]!;
    expect([row.change1dPct, row.change7dPct, row.change30dPct]).toEqual([null, null, null]);
  });

  it('filters by another peg (any case) and measures its deviation against the FX value of the peg', async () => {
    const out = await call({ peg: 'eur' });
    expect(out.filters.peg).toBe('EUR');
    expect(out.stablecoins.map((r) => r.symbol)).toEqual(['EURC', 'EURS', 'EURe']);
    const eurc = out.stablecoins[0]!;
    expect(eurc.pegDeviationPct).toBeCloseTo((1.0855 / usdPerUnit('EUR') - 1) * 100, 4);
    expect(eurc.circulatingUsd).toBeCloseTo(total(spec('EURC')) * 1.0855, 0);
    const eure = out.stablecoins[2]!;
    expect(eure.pegDeviationPct).toBeNull();
    expect(eure.circulatingUsd).toBeCloseTo(total(spec('EURe')) * usdPerUnit('EUR'), 0);
  });

  it('returns every peg with `all`, ranked by USD value, a variable peg without deviation', async () => {
    const out = await call({ peg: 'all', limit: 100 });
    expect(out.filters.peg).toBe('ALL');
    expect(out.matched).toBe(STABLECOIN_FIXTURE.length);
    expect(new Set(out.stablecoins.map((r) => r.pegCurrency))).toEqual(
      new Set(['USD', 'EUR', 'JPY', 'GBP', 'CHF', 'VAR']),
    );
    const jpyc = out.stablecoins.find((r) => r.symbol === 'JPYC')!;
    expect(jpyc.circulatingUsd).toBeCloseTo(total(spec('JPYC')) * 0.00671, 0);
    expect(jpyc.pegDeviationPct).toBeCloseTo((0.00671 / usdPerUnit('JPY') - 1) * 100, 4);
    expect(out.stablecoins.find((r) => r.symbol === 'FPI')!.pegDeviationPct).toBeNull();
    const byUsd = [...out.stablecoins].sort((a, b) => b.circulatingUsd - a.circulatingUsd).map((r) => r.symbol);
    expect(out.stablecoins.map((r) => r.symbol)).toEqual(byUsd);
  });

  it('with a chain filter (any case) keeps coins on that chain and ranks them by their circulation there', async () => {
    const out = await call({ chain: 'base' });
    expect(out.filters.chain).toBe('Base');
    const onBase = STABLECOIN_FIXTURE.filter((c) => c.pegType === 'peggedUSD' && c.chains.Base).sort(
      (a, b) => b.chains.Base![0] - a.chains.Base![0],
    );
    expect(out.stablecoins.map((r) => r.symbol)).toEqual(onBase.map((c) => c.symbol));
    const usdc = out.stablecoins[0]!;
    const [now, day] = spec('USDC').chains.Base!;
    expect(usdc.circulating).toBe(now);
    expect(usdc.change1dPct).toBeCloseTo(pctChange(now, day!), 4);
    expect(usdc.chainCount).toBe(6);
  });

  it('ranks by circulation on the chain, not overall', async () => {
    const out = await call({ chain: 'Ethereum', limit: 3 });
    expect(out.stablecoins.map((r) => r.symbol)).toEqual(['USDT', 'USDC', 'USDe']);
    const bsc = await call({ chain: 'BSC' });
    expect(bsc.stablecoins.map((r) => r.symbol)).toEqual(['USDT', 'FDUSD', 'DAI']);
  });

  it('searches name or symbol case-insensitively', async () => {
    const out = await call({ search: 'UsD', limit: 100 });
    const expected = STABLECOIN_FIXTURE.filter(
      (c) => c.pegType === 'peggedUSD' && `${c.name} ${c.symbol}`.toLowerCase().includes('usd'),
    );
    expect(out.stablecoins.map((r) => r.symbol).sort()).toEqual(expected.map((c) => c.symbol).sort());
    expect(out.filters.search).toBe('UsD');
  });

  it('filters by mechanism', async () => {
    const out = await call({ mechanism: 'algorithmic' });
    expect(out.stablecoins.map((r) => r.symbol)).toEqual(['USTC']);
    expect(out.filters.mechanism).toBe('algorithmic');
  });

  it('returns at most `limit` rows and reports how many matched before it', async () => {
    const out = await call({ limit: 3 });
    expect(out.count).toBe(3);
    expect(out.stablecoins).toHaveLength(3);
    expect(out.matched).toBe(STABLECOIN_FIXTURE.filter((c) => c.pegType === 'peggedUSD').length);
  });

  it('refuses a limit above 100 or below 1 at the boundary', () => {
    expect(stablecoins.input.safeParse({ limit: 101 }).success).toBe(false);
    expect(stablecoins.input.safeParse({ limit: 0 }).success).toBe(false);
    expect(stablecoins.input.parse({}).limit).toBe(20);
  });

  it('answers an unknown chain with not_found naming real chains', async () => {
    const err = await refusal({ chain: 'Etherium' });
    expect(err).toMatchObject({ code: 'not_found', field: 'chain' });
    expect(err.message).toMatch(/Ethereum/);
  });

  it('answers an unknown peg with not_found listing the known pegs', async () => {
    const err = await refusal({ peg: 'XYZ' });
    expect(err).toMatchObject({ code: 'not_found', field: 'peg' });
    expect(err.message).toMatch(/USD, EUR/);
  });

  it('answers filters that match nothing with not_found rather than an empty paid answer', async () => {
    const err = await refusal({ peg: 'EUR', mechanism: 'algorithmic' });
    expect(err.code).toBe('not_found');
    expect(err.message).toMatch(/Loosen a filter and call again\.$/);
  });

  it('says whether the answer came from the cache, and keeps the original fetch time', async () => {
    const own = providers();
    const before = lookalike.requests;
    const first = await call({}, own);
    const second = await call({ peg: 'all' }, own);
    expect([first.cached, second.cached]).toEqual([false, true]);
    expect(second.fetchedAt).toBe(first.fetchedAt);
    expect(lookalike.requests).toBe(before + 2); // the list once, the FX rates once (for the non-USD pegs)
  });
});
