import pRetry from 'p-retry';
import type { z } from 'zod';
import { ToolError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import { AttemptFailure, MAX_RETRY_AFTER_MS, sleep } from './attempt.js';
import { TtlLruCache } from './cache.js';
import { finalUpstreamError, readAnswer, type RawAnswer } from './upstream-answer.js';

export type { Fetched, UpstreamMetrics, UpstreamRequest, UpstreamSettings } from './upstream-types.js';
import type { Fetched, UpstreamMetrics, UpstreamRequest, UpstreamSettings } from './upstream-types.js';

interface Entry {
  data: unknown;
  fetchedAt: string;
}

interface Flight {
  promise: Promise<Entry>;
  controller: AbortController;
  waiters: number;
}

function cancelled(): ToolError {
  return new ToolError('cancelled', 'The call was cancelled before the upstream answered.');
}

/** JSON-over-HTTP client for one upstream: timeout, p-retry backoff on retryable failures, TTL+LRU cache, request coalescing. */
export class Upstream {
  private readonly cache: TtlLruCache<Entry>;
  private readonly inflight = new Map<string, Flight>();
  private calls = 0;

  /** Creates the client; nothing is fetched until the first request. */
  constructor(
    private readonly settings: UpstreamSettings,
    private readonly log: Logger,
    private readonly metrics?: UpstreamMetrics,
  ) {
    this.cache = new TtlLruCache<Entry>(settings.cacheMaxEntries);
  }

  /** How many HTTP requests really went to the upstream (for tests and metrics). */
  get upstreamCalls(): number {
    return this.calls;
  }

  /** The settings this client runs with (label for `source` fields and messages). */
  get info(): Readonly<UpstreamSettings> {
    return this.settings;
  }

  /** Fetches (or serves from cache / joins an identical in-flight request) and validates one response. */
  async request<S extends z.ZodType>(req: UpstreamRequest<S>): Promise<Fetched<z.output<S>>> {
    if (req.signal?.aborted) throw cancelled();
    const method = req.method ?? 'GET';
    const url = this.url(req.path, req.query);
    const body =
      req.form !== undefined
        ? new URLSearchParams(req.form).toString()
        : req.body === undefined
          ? undefined
          : JSON.stringify(req.body);
    const key = `${method} ${url} ${body ?? ''}`;
    const shared = req.once !== true;
    const ttlMs = shared ? (req.ttlMs ?? this.settings.cacheTtlMs) : 0;
    if (ttlMs > 0) {
      const hit = this.cache.get(key);
      this.metrics?.cacheLookup(this.settings.name, hit !== undefined);
      if (hit) return { data: hit.data as z.output<S>, fetchedAt: hit.fetchedAt, cached: true };
    }
    let flight = shared ? this.inflight.get(key) : undefined;
    if (!flight) {
      const controller = new AbortController();
      const started: Flight = {
        controller,
        waiters: 0,
        promise: this.fetchWithRetries(method, url, body, req, controller.signal).then((entry) => {
          this.cache.set(key, entry, ttlMs);
          return entry;
        }),
      };
      started.promise
        .finally(() => {
          if (this.inflight.get(key) === started) this.inflight.delete(key);
        })
        .catch(() => {});
      if (shared) this.inflight.set(key, started);
      flight = started;
    }
    const entry = await this.join(key, flight, req.signal);
    return { data: entry.data as z.output<S>, fetchedAt: entry.fetchedAt, cached: false };
  }

  /** Waits for a shared flight; a caller leaving early only aborts the flight when nobody else waits for it. */
  private join(key: string, flight: Flight, signal: AbortSignal | undefined): Promise<Entry> {
    flight.waiters += 1;
    return new Promise<Entry>((resolve, reject) => {
      let done = false;
      const leave = () => {
        if (done) return false;
        done = true;
        flight.waiters -= 1;
        signal?.removeEventListener('abort', onAbort);
        return true;
      };
      const onAbort = () => {
        if (!leave()) return;
        if (flight.waiters === 0) {
          if (this.inflight.get(key) === flight) this.inflight.delete(key);
          flight.controller.abort();
        }
        reject(cancelled());
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      flight.promise.then(
        (entry) => leave() && resolve(entry),
        (err: unknown) => leave() && reject(err),
      );
    });
  }

  private url(path: string, query: UpstreamRequest<z.ZodType>['query']): string {
    const base = this.settings.baseUrl.replace(/\/+$/, '');
    const url = new URL(path === '' ? base : base + '/' + path.replace(/^\/+/, ''));
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url.toString();
  }

  private async fetchWithRetries(
    method: string,
    url: string,
    body: string | undefined,
    req: UpstreamRequest<z.ZodType>,
    signal: AbortSignal,
  ): Promise<Entry> {
    const { name, retries } = this.settings;
    const path = new URL(url).pathname;
    let attempts = 0;
    try {
      return await pRetry(
        () => {
          attempts += 1;
          return this.attempt(method, url, body, req, signal);
        },
        {
          retries: req.once === true ? 0 : retries,
          factor: 2,
          minTimeout: this.settings.backoffMs ?? 250,
          maxTimeout: 4_000,
          randomize: true,
          signal,
          shouldRetry: ({ error }) =>
            error instanceof AttemptFailure && (error.retryAfterMs ?? 0) <= MAX_RETRY_AFTER_MS,
          onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
            this.log.warn('upstream attempt failed', {
              upstream: name,
              path,
              attempt: attemptNumber,
              retriesLeft,
              error: error.message,
            });
            if (error instanceof AttemptFailure && retriesLeft > 0) {
              const wait = error.retryAfterMs ?? 0;
              if (wait > 0 && wait <= MAX_RETRY_AFTER_MS) await sleep(wait, signal);
            }
          },
        },
      );
    } catch (err) {
      if (signal.aborted) throw cancelled();
      const error = finalUpstreamError(err, attempts, this.settings);
      this.metrics?.failed(name, error.code);
      throw error;
    }
  }

  /** One HTTP attempt: fetch, then classify the status, parse and validate. */
  private async attempt(
    method: string,
    url: string,
    body: string | undefined,
    req: UpstreamRequest<z.ZodType>,
    signal: AbortSignal,
  ): Promise<Entry> {
    const answer = await this.send(method, url, body, req, signal);
    const data = readAnswer(answer, req, this.settings, this.log);
    return { data, fetchedAt: new Date().toISOString() };
  }

  /** Sends one HTTP request within the time limit and reads its whole body; transport failures are retryable. */
  private async send(
    method: string,
    url: string,
    body: string | undefined,
    req: UpstreamRequest<z.ZodType>,
    signal: AbortSignal,
  ): Promise<RawAnswer> {
    const { timeoutMs } = this.settings;
    const timeout = AbortSignal.timeout(timeoutMs);
    const both = AbortSignal.any([signal, timeout]);
    this.calls += 1;
    try {
      const res = await fetch(url, {
        method,
        headers: {
          accept: 'application/json',
          ...(body === undefined
            ? {}
            : { 'content-type': req.form !== undefined ? 'application/x-www-form-urlencoded' : 'application/json' }),
          ...req.headers,
        },
        body,
        signal: both,
      });
      const status = res.status;
      const retryAfter = res.headers.get('retry-after');
      return { status, retryAfter, text: await res.text() };
    } catch (err) {
      if (signal.aborted) throw cancelled();
      if (timeout.aborted) throw new AttemptFailure('timeout', `no answer within ${timeoutMs} ms`);
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      throw new AttemptFailure('unavailable', `network error${cause ? ` ${cause}` : ''}`);
    }
  }
}
