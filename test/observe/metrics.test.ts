import { networkInterfaces } from 'node:os';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { appendPaymentIdentifierToExtensions } from '@x402/extensions/payment-identifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadConfig } from '../../src/config/config.js';
import { createLogger, silentLogger } from '../../src/shared/log.js';
import { createMetrics } from '../../src/observe/metrics.js';
import { Upstream } from '../../src/providers/upstream.js';
import { createRuntime, listen } from '../../src/runtime/runtime.js';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { mppClient, signCredential, tampered } from '../support/mpp.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { startHyperliquidLookalike } from '../support/upstreams/hyperliquid.js';

const TOKEN = 'metrics-token-for-tests-0123456789';
const args = { payment: 100, ratePerPeriod: 0.05, periods: 10 };

let paid: PaidEnvironment;
let server: TestServer;
let other: TestServer;
beforeAll(async () => {
  paid = await startPaidEnvironment(3);
  server = await startTestServer(paid.env);
  other = await startTestServer({ ...paid.env, METRICS_TOKEN: TOKEN });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await other?.close();
  await paid?.stop();
});

/** The value of one sample line (`name{labels} value`) of a Prometheus text exposition, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function challenge(
  url: string,
  path: string,
): Promise<{ required: PaymentRequired; entry: PaymentRequirements }> {
  const res = await fetch(url + path, { method: 'POST' });
  const required = decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
  return { required, entry: required.accepts.find((a) => a.network === LOCAL_NETWORK)! };
}

function pay(url: string, payment: unknown, body: unknown = args) {
  return fetch(url + '/api/annuity', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body: JSON.stringify(body),
  });
}

describe('GET /metrics', () => {
  it('counts paid calls by tool, network and outcome, revenue in atomic units, stage latencies and replays', async () => {
    const { required, entry } = await challenge(server.url, '/api/annuity');
    const payment = await signExactPayment(paid.payers[0]!, entry);
    payment.extensions = structuredClone(required.extensions ?? {}) as Record<string, unknown>;
    appendPaymentIdentifierToExtensions(payment.extensions, 'metrics_replay_id_000001');
    expect((await pay(server.url, payment)).status).toBe(200);
    expect((await pay(server.url, payment)).status).toBe(200); // the idempotent replay
    expect((await pay(server.url, payment, { ...args, periods: 'ten' })).status).toBe(400);
    const tampered = await signExactPayment(paid.payers[1]!, { ...entry, amount: '1' }, { value: '1' });
    expect((await pay(server.url, tampered)).status).toBe(402);

    const res = await fetch(server.url + '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    const calls = (network: string, protocol: string, outcome: string) =>
      sample(
        text,
        `tollbooth_paid_calls_total{tool="annuity",network="${network}",protocol="${protocol}",outcome="${outcome}"}`,
      );
    expect(calls('none', 'none', 'payment_required')).toBe(1);
    expect(calls(LOCAL_NETWORK, 'x402', 'settled')).toBe(1);
    expect(calls(LOCAL_NETWORK, 'x402', 'replayed')).toBe(1);
    expect(calls('none', 'x402', 'error')).toBe(1);
    expect(calls('none', 'x402', 'rejected')).toBe(1);
    expect(
      sample(text, `tollbooth_revenue_atomic_total{tool="annuity",network="${LOCAL_NETWORK}",protocol="x402"}`),
    ).toBe(Number(entry.amount));
    expect(sample(text, 'tollbooth_idempotent_replays_total{tool="annuity"}')).toBe(1);
    expect(sample(text, `tollbooth_verify_duration_seconds_count{network="${LOCAL_NETWORK}"}`)).toBe(2);
    expect(sample(text, 'tollbooth_handler_duration_seconds_count{tool="annuity"}')).toBe(1);
    expect(sample(text, `tollbooth_settle_duration_seconds_count{network="${LOCAL_NETWORK}"}`)).toBe(1);
    expect(sample(text, `tollbooth_settle_duration_seconds_sum{network="${LOCAL_NETWORK}"}`)).toBeGreaterThan(0);
    expect(sample(text, 'tollbooth_calls_in_flight')).toBe(0);
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(text).not.toContain(paid.payers[0]!.address);
  });

  it('splits paid calls, revenue and the paid-call log line by protocol: an MPP-paid and an x402-paid call of the same tool', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = createLogger('info', {
      write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
    });
    const both = await startTestServer(
      { ...paid.env, MPP_SECRET_KEY: 'metrics-mpp-secret-key-of-at-least-32-bytes' },
      { tools: [annuity] as AnyToolDefinition[], log },
    );
    try {
      const payer = paid.payers[2]!;
      const post = (headers: Record<string, string> = {}): RequestInit => ({
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(args),
      });
      expect((await mppClient(payer).fetch(both.url + '/api/annuity', post())).status).toBe(200);
      const { entry } = await challenge(both.url, '/api/annuity');
      expect((await pay(both.url, await signExactPayment(payer, entry))).status).toBe(200);
      const forged = tampered(
        await signCredential(payer, both.url + '/api/annuity', post()),
        (w) => (w.payload.value = '1'),
      );
      expect((await fetch(both.url + '/api/annuity', post({ authorization: forged }))).status).toBe(402);

      const text = await both.runtime.metrics.registry.metrics();
      const calls = (protocol: string, outcome: string) =>
        sample(
          text,
          `tollbooth_paid_calls_total{tool="annuity",network="${LOCAL_NETWORK}",protocol="${protocol}",outcome="${outcome}"}`,
        );
      const revenue = (protocol: string) =>
        sample(
          text,
          `tollbooth_revenue_atomic_total{tool="annuity",network="${LOCAL_NETWORK}",protocol="${protocol}"}`,
        );
      expect(calls('mpp', 'settled')).toBe(1);
      expect(calls('x402', 'settled')).toBe(1);
      expect(
        sample(text, 'tollbooth_paid_calls_total{tool="annuity",network="none",protocol="mpp",outcome="rejected"}'),
      ).toBe(1);
      expect(revenue('mpp')).toBe(Number(entry.amount));
      expect(revenue('x402')).toBe(Number(entry.amount));
      const protocols = new Set(
        [...text.matchAll(/^tollbooth_(?:paid_calls|revenue_atomic)_total\{[^}]*protocol="([^"]*)"/gm)].map(
          (m) => m[1],
        ),
      );
      expect([...protocols].sort()).toEqual(['mpp', 'none', 'x402']);

      const paidLines = lines.filter((l) => l.msg === 'paid call');
      expect(paidLines.map((l) => [l.protocol, l.outcome])).toEqual([
        ['mpp', 'settled'],
        ['x402', 'settled'],
        ['mpp', 'rejected'],
      ]);
      expect(paidLines[0]).toMatchObject({
        tool: 'annuity',
        transport: 'http',
        network: LOCAL_NETWORK,
        amount: entry.amount,
        payer: payer.address,
      });
    } finally {
      await both.close();
    }
  });

  it('reports the event-loop delay: a loop held busy shows in the maximum since the last scrape', async () => {
    await fetch(server.url + '/metrics'); // a scrape resets the histogram
    const until = Date.now() + 250;
    while (Date.now() < until) {
      /* hold the event loop, as a catastrophic pattern would */
    }
    await new Promise((r) => setTimeout(r, 30));
    const text = await (await fetch(server.url + '/metrics')).text();
    for (const q of ['p50', 'p90', 'p99', 'max'])
      expect(sample(text, `nodejs_eventloop_lag_${q}_seconds`), q).toBeTypeOf('number');
    expect(sample(text, 'tollbooth_event_loop_delay_max_seconds')).toBeGreaterThanOrEqual(0.2);
    expect(sample(text, 'tollbooth_event_loop_delay_seconds_bucket{le="0.1"}')).toBeLessThan(
      sample(text, 'tollbooth_event_loop_delay_seconds_count')!,
    );
    const later = await (await fetch(server.url + '/metrics')).text();
    expect(sample(later, 'tollbooth_event_loop_delay_max_seconds')).toBeLessThan(0.2);
  });

  it('keeps each runtime in its own registry', async () => {
    const text = await (await fetch(other.url + '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    expect(text).toContain('# TYPE tollbooth_paid_calls_total counter');
    expect(text).not.toContain('tollbooth_paid_calls_total{');
  });

  it('answers only the bearer token when METRICS_TOKEN is set', async () => {
    const none = await fetch(other.url + '/metrics');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(((await none.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    expect(
      (await fetch(other.url + '/metrics', { headers: { authorization: 'Bearer not-the-token-at-all' } })).status,
    ).toBe(401);
    expect((await fetch(other.url + '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });

  const external = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
  it.skipIf(external === undefined)(
    'refuses connections that do not come from loopback when no token is set (needs a non-loopback interface)',
    async () => {
      const runtime = await createRuntime(loadConfig({ DATA_DIR: server.dataDir, LOG_LEVEL: 'silent' }), {
        log: silentLogger,
      });
      const running = await listen(runtime, 0, external!);
      try {
        const res = await fetch(`http://${external}:${running.port}/metrics`);
        expect(res.status).toBe(403);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('forbidden');
        expect((await fetch(`http://${external}:${running.port}/healthz`)).status).toBe(200);
      } finally {
        await running.close();
        await runtime.close();
      }
    },
  );
});

describe('upstream metrics', () => {
  it('counts cache hits and misses, and requests that failed for good by upstream and code', async () => {
    const lookalike = await startHyperliquidLookalike();
    const metrics = createMetrics();
    const settings = {
      name: 'hyperliquid',
      label: 'Hyperliquid info API',
      baseUrl: lookalike.url,
      timeoutMs: 2_000,
      retries: 0,
      cacheTtlMs: 60_000,
      cacheMaxEntries: 10,
    };
    const upstream = new Upstream(settings, silentLogger, metrics.upstream);
    try {
      const meta = {
        method: 'POST' as const,
        path: '/info',
        body: { type: 'meta' },
        schema: z.object({ universe: z.array(z.unknown()) }),
      };
      expect((await upstream.request(meta)).cached).toBe(false);
      expect((await upstream.request(meta)).cached).toBe(true);
      lookalike.failNext('500');
      await expect(
        upstream.request({ ...meta, body: { type: 'allMids' }, schema: z.record(z.string(), z.string()) }),
      ).rejects.toMatchObject({ code: 'upstream_unavailable' });

      const text = await metrics.registry.metrics();
      expect(sample(text, 'tollbooth_upstream_cache_hits_total{upstream="hyperliquid"}')).toBe(1);
      expect(sample(text, 'tollbooth_upstream_cache_misses_total{upstream="hyperliquid"}')).toBe(2);
      expect(sample(text, 'tollbooth_upstream_errors_total{upstream="hyperliquid",code="upstream_unavailable"}')).toBe(
        1,
      );
    } finally {
      await lookalike.stop();
    }
  });
});
