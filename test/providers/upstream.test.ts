import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ToolError } from '../../src/shared/errors.js';
import { silentLogger } from '../../src/shared/log.js';
import { Upstream, type UpstreamRequest, type UpstreamSettings } from '../../src/providers/upstream.js';
import { startLookalikeServer, type Lookalike } from '../support/upstreams/server.js';

const ItemsSchema = z.object({ items: z.array(z.object({ id: z.number(), name: z.string() })) });
let lookalike: Lookalike;
let slowLookalike: Lookalike;

beforeAll(async () => {
  const handler = (req: { path: string; query: URLSearchParams; body: unknown }, mode: string | undefined) => {
    if (req.path === '/bad-request') return { status: 400, json: { error: 'bad parameter' } };
    if (req.path === '/missing') return { status: 200, json: { error: 'no such thing' } };
    if (mode === 'mismatch') return { json: { items: [{ id: 'one', name: 1 }] } };
    if (mode === 'empty') return { json: { items: [] } };
    const tag = req.query.get('tag') ?? JSON.stringify(req.body ?? null);
    return { json: { items: [{ id: 1, name: `item ${tag}` }] } };
  };
  lookalike = await startLookalikeServer(handler, { retryAfterSeconds: 1, slowMs: 1500 });
  slowLookalike = await startLookalikeServer(handler, { retryAfterSeconds: 60, slowMs: 300 });
});
afterAll(async () => {
  await lookalike?.stop();
  await slowLookalike?.stop();
});

function client(overrides: Partial<UpstreamSettings> = {}): Upstream {
  return new Upstream(
    {
      name: 'items',
      label: 'Items API',
      baseUrl: lookalike.url,
      // Long enough that a loaded machine never turns an ordinary answer into a retry; the timeout tests set their own.
      timeoutMs: 10_000,
      retries: 2,
      cacheTtlMs: 60_000,
      cacheMaxEntries: 10,
      backoffMs: 1,
      ...overrides,
    },
    silentLogger,
  );
}

async function failure(promise: Promise<unknown>): Promise<ToolError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolError);
  return err as ToolError;
}

const get = (up: Upstream, tag = 'a', extra: Omit<UpstreamRequest<typeof ItemsSchema>, 'path' | 'schema'> = {}) =>
  up.request({ path: '/items', query: { tag }, schema: ItemsSchema, ...extra });

describe('Upstream responses and cache', () => {
  it('validates the answer and reports when it was fetched, then serves the same fetchedAt from the cache', async () => {
    const up = client();
    const first = await get(up, 'fresh');
    expect(first.cached).toBe(false);
    expect(first.data.items[0]!.name).toBe('item fresh');
    const second = await get(up, 'fresh');
    expect(second).toEqual({ data: first.data, fetchedAt: first.fetchedAt, cached: true });
    expect(up.upstreamCalls).toBe(1);
    expect(Number.isNaN(Date.parse(first.fetchedAt))).toBe(false);
  });

  it('keys the cache by method, full URL and JSON body', async () => {
    const up = client();
    await get(up, 'x');
    await get(up, 'y');
    await up.request({ method: 'POST', path: '/items', body: { q: 1 }, schema: ItemsSchema });
    const other = await up.request({ method: 'POST', path: '/items', body: { q: 2 }, schema: ItemsSchema });
    expect(other.data.items[0]!.name).toBe('item {"q":2}');
    expect(up.upstreamCalls).toBe(4);
  });

  it('fetches again once the TTL has passed, and never caches with ttlMs 0', async () => {
    const up = client();
    await get(up, 'ttl', { ttlMs: 30 });
    await new Promise((r) => setTimeout(r, 60));
    const again = await get(up, 'ttl', { ttlMs: 30 });
    expect(again.cached).toBe(false);
    await get(up, 'nocache', { ttlMs: 0 });
    await get(up, 'nocache', { ttlMs: 0 });
    expect(up.upstreamCalls).toBe(4);
  });

  it('keeps at most cacheMaxEntries answers, evicting the least recently used', async () => {
    const up = client({ cacheMaxEntries: 2 });
    await get(up, 'a');
    await get(up, 'b');
    expect((await get(up, 'a')).cached).toBe(true);
    await get(up, 'c');
    expect((await get(up, 'a')).cached).toBe(true);
    expect((await get(up, 'b')).cached).toBe(false);
    expect(up.upstreamCalls).toBe(4);
  });

  it('does not cache failures', async () => {
    const up = client({ retries: 0 });
    lookalike.failNext('500');
    await failure(get(up, 'after-failure'));
    expect((await get(up, 'after-failure')).cached).toBe(false);
    expect(up.upstreamCalls).toBe(2);
  });
});

describe('Upstream request coalescing', () => {
  it('sends one upstream request for N concurrent identical calls', async () => {
    const up = client();
    const before = lookalike.requests;
    const answers = await Promise.all(Array.from({ length: 12 }, () => get(up, 'together')));
    expect(lookalike.requests - before).toBe(1);
    expect(up.upstreamCalls).toBe(1);
    expect(new Set(answers.map((a) => a.fetchedAt)).size).toBe(1);
    expect(answers.every((a) => a.cached === false)).toBe(true);
  });

  it('shares one failure among the callers that joined it', async () => {
    const up = client({ retries: 0 });
    lookalike.failNext('500');
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => get(up, 'shared-failure')));
    expect(
      results.every((r) => r.status === 'rejected' && (r.reason as ToolError).code === 'upstream_unavailable'),
    ).toBe(true);
    expect(up.upstreamCalls).toBe(1);
  });

  it('keeps the shared request alive for the others when one caller cancels', async () => {
    const up = client({ baseUrl: slowLookalike.url, timeoutMs: 2000 });
    slowLookalike.failNext('slow');
    const leaving = new AbortController();
    const first = get(up, 'one-leaves', { signal: leaving.signal });
    const second = get(up, 'one-leaves');
    leaving.abort();
    expect((await failure(first)).code).toBe('cancelled');
    expect((await second).data.items).toHaveLength(1);
    expect(up.upstreamCalls).toBe(1);
  });
});

describe('Upstream failures', () => {
  it('answers upstream_timeout after retrying a request that outlives the timeout', async () => {
    const up = client({ timeoutMs: 100, retries: 1 });
    lookalike.failNext('slow', 2);
    const err = await failure(get(up, 'slow'));
    expect(err.code).toBe('upstream_timeout');
    expect(err.httpStatus).toBe(504);
    expect(err.message).toMatch(/Items API did not answer within 100 ms \(2 attempts\)\. Try again in a minute\.$/);
    expect(up.upstreamCalls).toBe(2);
  });

  it('retries a 429 after the Retry-After delay and then succeeds', async () => {
    const up = client();
    lookalike.failNext('429');
    const answer = await get(up, 'rate-limited-once');
    expect(answer.data.items).toHaveLength(1);
    expect(up.upstreamCalls).toBe(2);
  });

  it('waits at least Retry-After seconds before the retry, on a clock only the test moves', async () => {
    // The clock is fake and moves only when the test advances it (10 ms a step, real I/O in between), so the gap
    // between the two requests is counted in steps the client had to wait for, whatever the machine's load.
    const stamps: number[] = [];
    const timed = await startLookalikeServer(
      () => {
        stamps.push(Date.now());
        return { json: { items: [] } };
      },
      { retryAfterSeconds: 1 },
    );
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      timed.failNext('429', 1, () => (stamps.push(Date.now()), true));
      let done = false;
      const call = client({ baseUrl: timed.url })
        .request({ path: '/items', schema: ItemsSchema })
        .finally(() => (done = true));
      for (let step = 0; !done && step < 1_000; step++) {
        for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
        await vi.advanceTimersByTimeAsync(10);
      }
      await call;
      expect(stamps).toHaveLength(2);
      expect(stamps[1]! - stamps[0]!).toBeGreaterThanOrEqual(1_000);
    } finally {
      vi.useRealTimers();
      await timed.stop();
    }
  });

  it('answers upstream_rate_limited (503) when 429s outlast the retries', async () => {
    const up = client({ baseUrl: slowLookalike.url, retries: 2 });
    slowLookalike.failNext('429');
    const err = await failure(get(up, 'always-limited'));
    expect(err.code).toBe('upstream_rate_limited');
    expect(err.httpStatus).toBe(503);
    // Retry-After 60 s is longer than a caller should wait: no retry, and the caller learns when to come back.
    expect(up.upstreamCalls).toBe(1);
    expect(err.details).toEqual({ retryAfterSeconds: 60 });
    expect(err.message).toMatch(/Try again in 60 s\.$/);
  });

  it('retries a 500 and a dropped connection, then gives up with upstream_unavailable (502)', async () => {
    const up = client({ retries: 2 });
    lookalike.failNext('500');
    lookalike.failNext('reset');
    expect((await get(up, 'recovers')).data.items).toHaveLength(1);
    expect(up.upstreamCalls).toBe(3);
    lookalike.failNext('500', 3);
    const err = await failure(get(up, 'stays-down'));
    expect(err.code).toBe('upstream_unavailable');
    expect(err.httpStatus).toBe(502);
    expect(up.upstreamCalls).toBe(6);
    lookalike.failNext('reset', 3);
    expect((await failure(get(up, 'unreachable'))).message).toMatch(/network error/);
  });

  it('answers upstream_unavailable for an unreachable host', async () => {
    const up = client({ baseUrl: 'http://127.0.0.1:9', retries: 1 });
    const err = await failure(get(up, 'nowhere'));
    expect(err.code).toBe('upstream_unavailable');
    expect(up.upstreamCalls).toBe(2);
  });

  it('does not retry a 400', async () => {
    const up = client();
    const err = await failure(up.request({ path: '/bad-request', schema: ItemsSchema }));
    expect(err.code).toBe('upstream_unavailable');
    expect(err.message).toMatch(/refused the request \(HTTP 400\)/);
    expect(up.upstreamCalls).toBe(1);
  });

  it('answers upstream_invalid, without retrying, for malformed JSON and for a schema mismatch', async () => {
    const up = client();
    lookalike.failNext('malformed');
    const malformed = await failure(get(up, 'malformed'));
    expect(malformed.code).toBe('upstream_invalid');
    expect(malformed.httpStatus).toBe(502);
    expect(malformed.message).toMatch(/not valid JSON/);
    lookalike.failNext('mismatch');
    const mismatch = await failure(get(up, 'mismatch'));
    expect(mismatch.code).toBe('upstream_invalid');
    expect(mismatch.message).toMatch(/unexpected shape \(at items\.0\.id/);
    expect(up.upstreamCalls).toBe(2);
  });

  it('lets the provider turn an HTTP-200 error body into its own error, without retrying', async () => {
    const up = client();
    const err = await failure(
      up.request({
        path: '/missing',
        schema: z.unknown(),
        interpret: (status, json) =>
          status === 200 && (json as { error?: string }).error
            ? new ToolError('not_found', 'No such thing; check the id.')
            : undefined,
      }),
    );
    expect(err.code).toBe('not_found');
    expect(up.upstreamCalls).toBe(1);
  });

  it('stops at once, without retrying, when the caller cancels', async () => {
    const up = client({ baseUrl: slowLookalike.url, timeoutMs: 2000 });
    slowLookalike.failNext('slow');
    const controller = new AbortController();
    const call = get(up, 'cancelled', { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expect((await failure(call)).code).toBe('cancelled');
    expect(up.upstreamCalls).toBe(1);
    const already = AbortSignal.abort();
    expect((await failure(get(up, 'never-sent', { signal: already }))).code).toBe('cancelled');
    expect(up.upstreamCalls).toBe(1);
  });
});
