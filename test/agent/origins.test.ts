import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { originSettings, publishedPriceMicros } from '../../src/agent/origins.js';
import { loadAgentConfig } from '../../src/agent/settings.js';
import { ConfigError } from '../../src/shared/env.js';
import { silentLogger } from '../../src/shared/log.js';
import type { NewSpend, SpendLedger } from '../../src/shared/spends.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { createTestSchema, postgresAvailability, type TestSchema } from '../support/postgres.js';

const limits = (value: string) => originSettings({ AGENT_ORIGIN_LIMITS: value });

describe('the per-origin settings', () => {
  it('read AGENT_ORIGINS as origins, AGENT_ORIGIN_LIMITS as per-call/per-day dollars, AGENT_PRICE_DRIFT as percent', () => {
    expect(
      originSettings({
        AGENT_ORIGINS: 'https://A.example/path, http://127.0.0.1:8080',
        AGENT_ORIGIN_LIMITS: 'https://a.example=0.05/1.00, http://127.0.0.1:8080=/2, *=0.01',
        AGENT_PRICE_DRIFT: '5%',
      }),
    ).toEqual({
      allowed: ['https://a.example', 'http://127.0.0.1:8080'],
      limits: {
        'https://a.example': { perCallUsd: 0.05, perDayUsd: 1 },
        'http://127.0.0.1:8080': { perDayUsd: 2 },
        '*': { perCallUsd: 0.01 },
      },
      driftPercent: 5,
    });
  });

  it('default to any origin, no per-origin caps and a 10% drift', () => {
    expect(originSettings({})).toEqual({ limits: {}, driftPercent: 10 });
    expect(loadAgentConfig({ DATA_DIR: '/tmp/x' }).settings.origins).toEqual({ limits: {}, driftPercent: 10 });
  });

  it('refuse malformed values, naming the variable', () => {
    expect(() => limits('https://a.example=abc')).toThrow(/AGENT_ORIGIN_LIMITS/);
    expect(() => limits('https://a.example=1/2/3')).toThrow(/AGENT_ORIGIN_LIMITS/);
    expect(() => limits('ftp://a.example=1')).toThrow(/AGENT_ORIGIN_LIMITS/);
    expect(() => limits('https://a.example=1,https://a.example/x=2')).toThrow(/twice/);
    expect(() => originSettings({ AGENT_PRICE_DRIFT: 'ten' })).toThrow(/AGENT_PRICE_DRIFT/);
    expect(() => loadAgentConfig({ DATA_DIR: '/tmp/x', AGENT_ORIGINS: 'not a url' })).toThrow(ConfigError);
  });
});

describe("a catalog's published price", () => {
  it('is read from x402/price as Tollbooth lists it (a number) and as a well-known item gives it (a string)', () => {
    expect(publishedPriceMicros({ 'x402/price': { usd: 0.001, display: '$0.001 per call' } })).toBe(1000);
    expect(publishedPriceMicros({ 'x402/price': { usd: '0.25', currency: 'USD' } })).toBe(250_000);
    expect(publishedPriceMicros({ 'x402/price': { usd: 'free' } })).toBeUndefined();
    expect(publishedPriceMicros(undefined)).toBeUndefined();
  });
});

const today = new Date().toISOString().slice(0, 10);
let n = 0;
const spend = (origin: string, usdMicros: number, extra: Partial<NewSpend> = {}): NewSpend => ({
  id: `s${++n}`,
  day: today,
  tool: 'fetch',
  resource: `${origin}/quote?n=${n}`,
  origin,
  payTo: '0x1111111111111111111111111111111111111111',
  requestHash: `h${n}`,
  network: 'eip155:84532',
  asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  amount: String(usdMicros),
  usdMicros,
  protocol: 'x402',
  ...extra,
});

const dir = mkdtempSync(join(tmpdir(), 'tollbooth-origins-'));
const schemas: TestSchema[] = [];
const stores: Store[] = [];
afterAll(async () => {
  for (const store of stores) await store.close();
  for (const schema of schemas) await schema.drop();
  rmSync(dir, { recursive: true, force: true });
});

const databases: [string, () => Promise<SpendLedger>][] = [
  [
    'SQLite',
    async () => {
      const store = await openStore({ dataDir: mkdtempSync(join(dir, 'store-')) }, silentLogger);
      stores.push(store);
      return store.spends;
    },
  ],
];
if (postgresAvailability.ok) {
  databases.push([
    'PostgreSQL',
    async () => {
      const schema = await createTestSchema('tollbooth_origins');
      schemas.push(schema);
      const store = await openStore({ dataDir: dir, databaseUrl: schema.url }, silentLogger);
      stores.push(store);
      return store.spends;
    },
  ]);
}

describe.each(databases)("the spending ledger's per-origin part on %s", (_name, open) => {
  it("claims against the day's budget and the origin's day cap in one step: of 10 concurrent claims only the affordable pass", async () => {
    const spends = await open();
    const origin = 'https://busy.example';
    await spends.claimSpend(spend('https://other.example', 5000), 1_000_000);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => spends.claimSpend(spend(origin, 2500), 1_000_000, 10_000)),
    );
    expect(results.filter((r) => r.type === 'reserved')).toHaveLength(4);
    expect(await spends.originSpentOn(origin, today)).toBe(10_000);
    expect(await spends.claimSpend(spend(origin, 1), 1_000_000, 10_000)).toEqual({
      type: 'over_budget',
      spentMicros: 15_000,
      originSpentMicros: 10_000,
    });
    expect(await spends.claimSpend(spend('https://third.example', 1), 1_000_000, 10_000)).toMatchObject({
      type: 'reserved',
    });
    // Without an origin cap only the day's budget binds.
    expect(await spends.claimSpend(spend(origin, 1000), 15_500)).toEqual({ type: 'over_budget', spentMicros: 15_001 });
  });

  it('pins a pay-to once per origin and network, replaces it only when asked, and finds the last settled price by path', async () => {
    const spends = await open();
    const pin = { origin: 'https://pin.example', network: 'eip155:84532', payTo: '0xAAA' };
    expect(await spends.payToPin(pin.origin, pin.network)).toBeUndefined();
    expect(await spends.pinPayTo(pin, false)).toBe('0xAAA');
    expect(await spends.pinPayTo({ ...pin, payTo: '0xBBB' }, false)).toBe('0xAAA');
    expect(await spends.payToPin(pin.origin, 'eip155:8453')).toBeUndefined();
    expect(await spends.pinPayTo({ ...pin, payTo: '0xBBB' }, true)).toBe('0xBBB');

    const paidOnce = spend(pin.origin, 1200);
    await spends.claimSpend(paidOnce, 1_000_000);
    await spends.completeSpend(paidOnce.id, { status: 'settled' });
    const other = spend(pin.origin, 9000, { resource: `${pin.origin}/other` });
    await spends.claimSpend(other, 1_000_000);
    await spends.completeSpend(other.id, { status: 'settled' });
    expect(await spends.lastSettledPrice('fetch', pin.origin, '/quote')).toBe(1200);
    expect(await spends.lastSettledPrice('fetch', pin.origin, '/missing')).toBeUndefined();
    expect(await spends.lastSettledPrice('annuity', pin.origin, '/quote')).toBeUndefined();
  });

  it('keeps a held pin once its payment went out, and drops it, hands it on or puts back the one it replaced otherwise', async () => {
    const spends = await open();
    const origin = 'https://held.example';
    const network = 'eip155:84532';
    const [a, b] = ['0x1111111111111111111111111111111111111111', '0x2222222222222222222222222222222222222222'];
    const hold = async (s: NewSpend, replace = false) => {
      await spends.claimSpend(s, 1_000_000);
      return spends.pinPayTo({ origin, network, payTo: s.payTo!, spendId: s.id }, replace);
    };
    // Released (declined, refused) or failed: the pin goes with it.
    const declined = spend(origin, 10, { payTo: a });
    expect(await hold(declined)).toBe(a);
    await spends.releaseSpend(declined.id, 'declined');
    expect(await spends.payToPin(origin, network)).toBeUndefined();
    const failed = spend(origin, 10, { payTo: b });
    expect(await hold(failed)).toBe(b);
    await spends.completeSpend(failed.id, { status: 'failed', note: 'settlement failed' });
    expect(await spends.payToPin(origin, network)).toBeUndefined();

    // Two concurrent payments to one address: the first fails, the second still holds the pin and keeps it.
    const [first, second] = [spend(origin, 10, { payTo: a }), spend(origin, 10, { payTo: a })];
    expect(await hold(first)).toBe(a);
    expect(await hold(second)).toBe(a);
    await spends.releaseSpend(first.id, 'refused');
    expect(await spends.payToPin(origin, network)).toBe(a);
    await spends.completeSpend(second.id, { status: 'settled' });
    expect(await spends.payToPin(origin, network)).toBe(a);

    // An approved change whose payment never goes out puts the paid pin back; one that settles stays.
    const change = spend(origin, 10, { payTo: b });
    expect(await hold(change, true)).toBe(b);
    await spends.completeSpend(change.id, { status: 'failed' });
    expect(await spends.payToPin(origin, network)).toBe(a);
    const paidChange = spend(origin, 10, { payTo: b });
    expect(await hold(paidChange, true)).toBe(b);
    await spends.completeSpend(paidChange.id, { status: 'pending' });
    await spends.releaseSpend(paidChange.id, 'the chain shows it unused');
    expect(await spends.payToPin(origin, network)).toBe(b);
  });
});
