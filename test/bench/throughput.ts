import { createServer, type Server } from 'node:http';
import autocannon from 'autocannon';
import express from 'express';

/** Requests per second and p99 latency of one autocannon run. */
export interface LoadResult {
  rps: number;
  p99ms: number;
  errors: number;
  non2xx: number;
  /** Answers that were not the expected status (e.g. a 429 from a rate limit where a 402 was meant). */
  unexpected: number;
}

/** Runs autocannon against a URL for `seconds` with `connections` connections. */
export async function load(
  url: string,
  options: { method?: 'GET' | 'POST'; seconds: number; connections: number; body?: string; expect?: number },
): Promise<LoadResult> {
  const result = await autocannon({
    url,
    method: options.method ?? 'GET',
    duration: options.seconds,
    connections: options.connections,
    ...(options.body ? { body: options.body, headers: { 'content-type': 'application/json' } } : {}),
  });
  const byStatus = (result as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {};
  const total = Object.values(byStatus).reduce((n, s) => n + s.count, 0);
  const unexpected = options.expect === undefined ? 0 : total - (byStatus[String(options.expect)]?.count ?? 0);
  return {
    rps: result.requests.average,
    p99ms: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
    unexpected,
  };
}

/** A fixed response for the baseline: a small JSON, or the same bytes our 402 carries. */
export interface FixedResponse {
  body: string;
  headers?: Record<string, string>;
}

/** A bare express app answering one POST route with a fixed JSON body: the baseline. */
export async function startBareExpress(fixed: FixedResponse): Promise<{ url: string; close: () => Promise<void> }> {
  const app = express();
  app.post('/api/annuity', (_req, res) => {
    for (const [k, v] of Object.entries(fixed.headers ?? {})) res.setHeader(k, v);
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.status(402).end(fixed.body);
  });
  const server: Server = createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) };
}
