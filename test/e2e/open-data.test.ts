import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import type { PrivateKeyAccount } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHttpClient } from '../support/mcp.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { KALSHI_FIXTURE, startKalshiLookalike, type EventSpec } from '../support/upstreams/kalshi.js';
import type { FailureMode, Lookalike } from '../support/upstreams/server.js';
import { startStablecoinsLookalike } from '../support/upstreams/stablecoins.js';
import { startWorldBankLookalike } from '../support/upstreams/worldbank.js';
import { generatePools, startYieldsLookalike } from '../support/upstreams/yields.js';

/**
 * The four open-data endpoints end to end: paid calls over HTTP and MCP against look-alike upstreams, settled on a
 * local chain; every upstream failure mode answered with its documented status and never settled; the cache and
 * request coalescing seen from the upstream's side.
 */

const SLOW_MS = 1_500;
/** Spare events so every Kalshi failure mode asks for its own ticker (an `empty` answer is a valid, cached event). */
const spareEvents: EventSpec[] = Array.from({ length: 20 }, (_, i) => ({
  ...KALSHI_FIXTURE[0]!,
  event_ticker: `KXSPARE-${i}`,
  series_ticker: 'KXSPARE',
}));

let paid: PaidEnvironment;
const upstreams = {} as Record<'stablecoins' | 'yields' | 'worldbank' | 'kalshi', Lookalike>;
let env: Record<string, string>;

beforeAll(async () => {
  paid = await startPaidEnvironment(4);
  const options = { slowMs: SLOW_MS, retryAfterSeconds: 0 };
  upstreams.stablecoins = await startStablecoinsLookalike(options);
  upstreams.yields = await startYieldsLookalike({ ...options, pools: generatePools(2_000, 3) });
  upstreams.worldbank = await startWorldBankLookalike(options);
  upstreams.kalshi = await startKalshiLookalike({ ...options, events: [...KALSHI_FIXTURE, ...spareEvents] });
  env = {
    ...paid.env,
    DEFILLAMA_STABLECOINS_URL: upstreams.stablecoins.url,
    DEFILLAMA_YIELDS_URL: upstreams.yields.url,
    WORLDBANK_API_URL: upstreams.worldbank.url,
    KALSHI_API_URL: upstreams.kalshi.url,
    UPSTREAM_TIMEOUT_MS: '1000',
    UPSTREAM_RETRIES: '1',
  };
}, 120_000);
afterAll(async () => {
  for (const lookalike of Object.values(upstreams)) await lookalike?.stop();
  await paid?.stop();
});

/** One endpoint as a test calls it: HTTP method, path, a valid input, its price and its look-alike. */
interface Endpoint {
  tool: string;
  method: 'GET' | 'POST';
  path: string;
  input: Record<string, string | number>;
  price: bigint;
  upstream: () => Lookalike;
}

const endpoints: Endpoint[] = [
  {
    tool: 'stablecoins',
    method: 'POST',
    path: '/api/stablecoins',
    input: { limit: 5 },
    price: 3000n,
    upstream: () => upstreams.stablecoins,
  },
  {
    tool: 'dex-top-pools',
    method: 'POST',
    path: '/api/dex-top-pools',
    input: { chain: 'ethereum', limit: 5 },
    price: 1000n,
    upstream: () => upstreams.yields,
  },
  {
    tool: 'venue-event',
    method: 'POST',
    path: '/api/venue-event',
    input: { eventTicker: 'KXFEDDECISION-25DEC' },
    price: 2000n,
    upstream: () => upstreams.kalshi,
  },
  {
    tool: 'development-indicator',
    method: 'GET',
    path: '/api/development-indicator',
    input: { country: 'BR', indicator: 'NY.GDP.MKTP.CD' },
    price: 10000n,
    upstream: () => upstreams.worldbank,
  },
];

async function localEntry(server: TestServer, endpoint: Endpoint): Promise<PaymentRequirements> {
  const res = await fetch(server.url + endpoint.path, { method: endpoint.method });
  expect(res.status).toBe(402);
  const challenge = decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
  const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK);
  if (!entry) throw new Error('the local network is not advertised');
  return entry;
}

/** A paid HTTP call: query string on GET, JSON body on POST, the payment in PAYMENT-SIGNATURE. */
async function payHttp(
  server: TestServer,
  endpoint: Endpoint,
  payer: PrivateKeyAccount,
  input = endpoint.input,
): Promise<Response> {
  const payment = encodePayment(await signExactPayment(payer, await localEntry(server, endpoint)));
  if (endpoint.method === 'GET') {
    const query = new URLSearchParams(Object.entries(input).map(([k, v]): [string, string] => [k, String(v)]));
    return fetch(`${server.url}${endpoint.path}?${query}`, { headers: { 'payment-signature': payment } });
  }
  return fetch(server.url + endpoint.path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': payment },
    body: JSON.stringify(input),
  });
}

async function payMcp(
  client: Client,
  server: TestServer,
  endpoint: Endpoint,
  payer: PrivateKeyAccount,
  input = endpoint.input,
) {
  const payment = await signExactPayment(payer, await localEntry(server, endpoint));
  return client.callTool({ name: endpoint.tool, arguments: input, _meta: { 'x402/payment': payment } });
}

describe('paid open-data calls settle after a real answer', () => {
  let server: TestServer;
  let mcp: Client;
  beforeAll(async () => {
    server = await startTestServer(env);
    mcp = await connectHttpClient(server.url);
  });
  afterAll(async () => {
    await mcp?.close();
    await server?.close();
  });

  for (const [i, endpoint] of endpoints.entries()) {
    it(`${endpoint.tool}: over HTTP, answers from the upstream, charges exactly the price and returns a receipt`, async () => {
      const payer = paid.payers[i]!;
      const before = await paid.balance(payer.address);
      const res = await payHttp(server, endpoint, payer);
      expect(res.status).toBe(200);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body.count ?? body.marketCount).toBeGreaterThan(0);
      const receipt = decodeHeader(res.headers.get('payment-response')) as { success: boolean; network: string };
      expect(receipt).toMatchObject({ success: true, network: LOCAL_NETWORK });
      expect(await paid.balance(payer.address)).toBe(before - endpoint.price);
    });

    it(`${endpoint.tool}: over MCP, returns structured content and the receipt in _meta`, async () => {
      const payer = paid.payers[i]!;
      const before = await paid.balance(payer.address);
      const result = await payMcp(mcp, server, endpoint, payer);
      expect(result.isError).toBeFalsy();
      const content = result.structuredContent as Record<string, unknown>;
      expect(content.count ?? content.marketCount).toBeGreaterThan(0);
      expect((result._meta?.['x402/payment-response'] as { success: boolean }).success).toBe(true);
      expect(await paid.balance(payer.address)).toBe(before - endpoint.price);
    });
  }

  it('serves the specification-shaped answers the tools promise', async () => {
    const stable = (await (await payHttp(server, endpoints[0]!, paid.payers[0]!)).json()) as {
      source: string;
      cached: boolean;
      stablecoins: Array<{ symbol: string; rank: number }>;
    };
    expect(stable.source).toBe('DefiLlama stablecoins API');
    expect(stable.stablecoins.map((r) => r.rank)).toEqual([1, 2, 3, 4, 5]);
    const pools = (await (await payHttp(server, endpoints[1]!, paid.payers[1]!)).json()) as {
      chain: string;
      pools: Array<{ chain: string }>;
    };
    expect(pools.chain).toBe('Ethereum');
    expect(pools.pools.every((p) => p.chain === 'Ethereum')).toBe(true);
    const event = (await (await payHttp(server, endpoints[2]!, paid.payers[2]!)).json()) as {
      mutuallyExclusive: boolean;
      markets: Array<{ yesBid: number; venueUrl: string }>;
    };
    expect(event.mutuallyExclusive).toBe(true);
    expect(typeof event.markets[0]!.yesBid).toBe('number');
    const series = (await (await payHttp(server, endpoints[3]!, paid.payers[3]!)).json()) as {
      count: number;
      series: Array<{ year: number }>;
    };
    expect(series.series.map((p) => p.year)).toEqual([2018, 2019, 2020, 2021, 2022, 2023]);
  });

  it('answers a repeated call from the cache: no upstream request, `cached` true, the first fetch time', async () => {
    const endpoint = endpoints[0]!;
    const first = (await (await payHttp(server, endpoint, paid.payers[0]!, { peg: 'USD', limit: 3 })).json()) as {
      cached: boolean;
      fetchedAt: string;
    };
    const before = upstreams.stablecoins.requests;
    const again = (await (await payHttp(server, endpoint, paid.payers[0]!, { peg: 'USD', limit: 4 })).json()) as {
      cached: boolean;
      fetchedAt: string;
    };
    expect(upstreams.stablecoins.requests).toBe(before);
    expect(again.cached).toBe(true);
    expect(again.fetchedAt).toBe(first.fetchedAt);
    for (const other of endpoints.slice(1)) {
      const count = other.upstream().requests;
      expect((await payHttp(server, other, paid.payers[1]!)).status).toBe(200);
      expect(other.upstream().requests).toBe(count);
    }
  });

  it('asks the upstream again for a query it has not cached (a cache miss)', async () => {
    const endpoint = endpoints[3]!;
    const before = upstreams.worldbank.requests;
    const res = await payHttp(server, endpoint, paid.payers[3]!, {
      country: 'DEU',
      indicator: 'SP.POP.TOTL',
      startYear: 2010,
      endYear: 2012,
    });
    expect(res.status).toBe(200);
    expect(upstreams.worldbank.requests).toBe(before + 1);
  });
});

describe('concurrent paid calls share one upstream request', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(env);
  });
  afterAll(async () => {
    await server?.close();
  });

  for (const endpoint of endpoints) {
    it(`${endpoint.tool}: 4 concurrent paid calls with a cold cache → 1 upstream request, 4 answers, each payer charged once`, async () => {
      const before = endpoint.upstream().requests;
      const balances = await Promise.all(paid.payers.map((p) => paid.balance(p.address)));
      const responses = await Promise.all(paid.payers.map((payer) => payHttp(server, endpoint, payer)));
      expect(endpoint.upstream().requests).toBe(before + 1);
      // Every call got its answer from the one shared upstream request, and the four settlements ran side by side.
      expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      if (endpoint.tool === 'stablecoins') {
        // Joined or served from the cache it filled, every answer carries the one upstream fetch's time.
        const times = await Promise.all(
          responses.map(async (r) => ((await r.clone().json()) as { fetchedAt: string }).fetchedAt),
        );
        expect(new Set(times).size).toBe(1);
      }
      for (const [i, payer] of paid.payers.entries()) {
        const res = responses[i]!;
        expect(res.status).toBe(200);
        expect(await paid.balance(payer.address)).toBe(balances[i]! - endpoint.price);
      }
    });
  }
});

describe('an upstream failure is answered with its documented error and never charged', () => {
  let server: TestServer;
  let mcp: Client;
  beforeAll(async () => {
    server = await startTestServer(env);
    mcp = await connectHttpClient(server.url);
  });
  afterAll(async () => {
    await mcp?.close();
    await server?.close();
  });

  /** Mode, attempts it must fail (retryable modes fail both attempts), and per endpoint the status and error code. */
  const table: Array<[FailureMode, number, Record<string, [number, string]>]> = [
    [
      '429',
      2,
      {
        stablecoins: [503, 'upstream_rate_limited'],
        'dex-top-pools': [503, 'upstream_rate_limited'],
        'venue-event': [503, 'upstream_rate_limited'],
        'development-indicator': [503, 'upstream_rate_limited'],
      },
    ],
    [
      '500',
      2,
      {
        stablecoins: [502, 'upstream_unavailable'],
        'dex-top-pools': [502, 'upstream_unavailable'],
        'venue-event': [502, 'upstream_unavailable'],
        'development-indicator': [502, 'upstream_unavailable'],
      },
    ],
    [
      'reset',
      2,
      {
        stablecoins: [502, 'upstream_unavailable'],
        'dex-top-pools': [502, 'upstream_unavailable'],
        'venue-event': [502, 'upstream_unavailable'],
        'development-indicator': [502, 'upstream_unavailable'],
      },
    ],
    [
      'slow',
      2,
      {
        stablecoins: [504, 'upstream_timeout'],
        'dex-top-pools': [504, 'upstream_timeout'],
        'venue-event': [504, 'upstream_timeout'],
        'development-indicator': [504, 'upstream_timeout'],
      },
    ],
    [
      'malformed',
      1,
      {
        stablecoins: [502, 'upstream_invalid'],
        'dex-top-pools': [502, 'upstream_invalid'],
        'venue-event': [502, 'upstream_invalid'],
        'development-indicator': [502, 'upstream_invalid'],
      },
    ],
    [
      'mismatch',
      1,
      {
        stablecoins: [502, 'upstream_invalid'],
        'dex-top-pools': [502, 'upstream_invalid'],
        'venue-event': [502, 'upstream_invalid'],
        'development-indicator': [502, 'upstream_invalid'],
      },
    ],
    [
      'error200',
      1,
      {
        stablecoins: [502, 'upstream_invalid'],
        'dex-top-pools': [502, 'upstream_unavailable'],
        'venue-event': [502, 'upstream_unavailable'],
        'development-indicator': [502, 'upstream_unavailable'],
      },
    ],
    [
      'empty',
      1,
      {
        stablecoins: [502, 'upstream_unavailable'],
        'dex-top-pools': [502, 'upstream_unavailable'],
        'venue-event': [404, 'not_found'],
        'development-indicator': [404, 'not_found'],
      },
    ],
  ];

  /** A fresh query per test for the upstreams whose URL varies, so no cached answer hides the failure. */
  const used = new Map<string, number>();
  function freshInput(endpoint: Endpoint): Record<string, string | number> {
    const n = (used.get(endpoint.tool) ?? 0) + 1;
    used.set(endpoint.tool, n);
    if (endpoint.tool === 'venue-event') return { eventTicker: spareEvents[n]!.event_ticker };
    if (endpoint.tool === 'development-indicator') return { ...endpoint.input, startYear: 1960 + n, endYear: 2023 };
    return endpoint.input;
  }

  for (const [mode, times, expected] of table) {
    for (const [i, endpoint] of endpoints.entries()) {
      const [status, code] = expected[endpoint.tool]!;
      it(`${endpoint.tool}: upstream ${mode} → HTTP ${status} ${code}, no settlement`, async () => {
        const payer = paid.payers[i]!;
        const before = await paid.balance(payer.address);
        endpoint.upstream().failNext(mode, times);
        const res = await payHttp(server, endpoint, payer, freshInput(endpoint));
        expect(res.status).toBe(status);
        expect(res.headers.get('payment-response')).toBeNull();
        const error = ((await res.json()) as { error: { code: string; message: string } }).error;
        expect(error.code).toBe(code);
        expect(error.message).toMatch(/\. Nothing was charged\.$/);
        expect(await paid.balance(payer.address)).toBe(before);
      });
    }
  }

  for (const [i, endpoint] of endpoints.entries()) {
    it(`${endpoint.tool}: over MCP an upstream 500 is an error result and nothing is charged`, async () => {
      const payer = paid.payers[i]!;
      const before = await paid.balance(payer.address);
      endpoint.upstream().failNext('500', 2);
      const result = await payMcp(mcp, server, endpoint, payer, freshInput(endpoint));
      expect(result.isError).toBe(true);
      expect(result._meta?.['x402/payment-response']).toBeUndefined();
      const text = (result.content as Array<{ type: string; text: string }>)[0]!.text;
      expect(JSON.parse(text)).toMatchObject({ error: { code: 'upstream_unavailable' } });
      expect(await paid.balance(payer.address)).toBe(before);
    });
  }

  it('recovers once the upstream does: the next paid call is answered and settled', async () => {
    const endpoint = endpoints[0]!;
    const payer = paid.payers[0]!;
    const before = await paid.balance(payer.address);
    const res = await payHttp(server, endpoint, payer);
    expect(res.status).toBe(200);
    expect(await paid.balance(payer.address)).toBe(before - endpoint.price);
  });
});
