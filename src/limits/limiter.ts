import type { RequestHandler, Response } from 'express';
import { ToolError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import { refusalOf } from '../http/encode.js';
import type { RateBuckets, TokenClaimResult } from '../store/buckets.js';
import { MemoryBuckets, type BucketRate } from './bucket.js';
import { clientKey } from './client-ip.js';
import type { LimitSettings } from './settings.js';

/** Which limit refused a request. */
export type LimitName = 'ip' | 'payer' | 'tool';

/** A verified paid call about to run, as the pipeline asks the limiter about it. */
export interface PaidAdmission {
  tool: string;
  payer: string;
}

/** Per-IP limiting in front of every HTTP request, and per-payer/per-tool limiting of verified paid calls. */
export interface Limits {
  /** Express middleware for the very front of the app: one bucket per client IP, before any body or header is read. */
  perIp: RequestHandler;
  /** The pipeline's hook after verification, before the handler: a ToolError (`rate_limited`) refuses the call. */
  admit(call: PaidAdmission): Promise<ToolError | undefined>;
  /** Stops the bucket sweeper. */
  close(): void;
}

/** Options for tests: a clock. */
export interface LimitsOptions {
  /** Epoch milliseconds; defaults to Date.now. */
  now?: () => number;
}

const SWEEP_MS = 60_000;
const STORE_PURGE_EVERY = 10;
const WARN_EVERY_MS = 60_000;

/** Seconds for `Retry-After`: whole seconds, at least one. */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** The `rate_limited` error a limit answers with; `details.retryAfterSeconds` also becomes the HTTP Retry-After header. */
export function limitedError(limit: LimitName, retryAfterMs: number, subject?: string): ToolError {
  const seconds = retryAfterSeconds(retryAfterMs);
  const wait = `retry in ${seconds} second${seconds === 1 ? '' : 's'}`;
  const message =
    limit === 'ip'
      ? `Too many requests from your address; ${wait}. Nothing was read.`
      : limit === 'payer'
        ? `Too many paid calls from this payer right now; ${wait}. Your payment was not used: send the same payment again then.`
        : `Too many calls of ${subject ?? 'this tool'} right now; ${wait}. Your payment was not used: send the same payment again then.`;
  return new ToolError('rate_limited', message, { details: { limit, retryAfterSeconds: seconds } });
}

/** Sets `Retry-After` when an error carries `details.retryAfterSeconds` (rate limits, upstream throttling). */
export function setRetryAfter(res: Response, error: ToolError): void {
  const seconds = error.details?.retryAfterSeconds;
  if (typeof seconds === 'number' && seconds > 0) res.setHeader('Retry-After', String(Math.ceil(seconds)));
}

/** EVM addresses are case-insensitive; other families' addresses are kept as given. */
function payerKey(payer: string): string {
  return /^0x[0-9a-fA-F]{40}$/.test(payer) ? payer.toLowerCase() : payer;
}

/** A bucket the limiter asks about, with its rate. */
interface Ask {
  key: string;
  rate: BucketRate;
}

/** The store's buckets as the limiter asks them: a failing store lets requests through, warned about once a minute. */
function sharedBuckets(buckets: RateBuckets, log: Logger, now: () => number) {
  let lastWarning = 0;
  // A limiter must never take the service down: the store failing lets the request through (the replay guard, which
  // the paid path also needs, fails closed on its own).
  const passed = (err: unknown) => {
    if (now() - lastWarning <= WARN_EVERY_MS) return;
    lastWarning = now();
    log.warn('rate-limit store unavailable; requests pass unlimited', {
      error: String((err as Error)?.message ?? err),
    });
  };
  const request = ({ key, rate }: Ask, at: number) => ({
    key,
    capacity: rate.capacity,
    refillPerSecond: rate.refillPerSecond,
    cost: 1,
    now: at,
  });
  return {
    one: async (ask: Ask): Promise<TokenClaimResult> => {
      try {
        return await buckets.claimTokens(request(ask, now()));
      } catch (err) {
        passed(err);
        return { type: 'taken', remaining: 0 };
      }
    },
    each: async (asks: readonly Ask[]): Promise<TokenClaimResult[]> => {
      if (asks.length === 0) return [];
      try {
        const at = now();
        return await buckets.claimTokensFromEach(asks.map((ask) => request(ask, at)));
      } catch (err) {
        passed(err);
        return asks.map(() => ({ type: 'taken', remaining: 0 }));
      }
    },
  };
}

/** Answers a request over its address's limit: 429 with Retry-After; on /mcp as a transport-level JSON-RPC error. */
function refuseIp(res: Response, path: string, retryAfterMs: number): void {
  const error = refusalOf(res, limitedError('ip', retryAfterMs));
  setRetryAfter(res, error);
  res.setHeader('Cache-Control', 'no-store');
  if (path === '/mcp' || path.startsWith('/mcp/')) {
    // MCP clients read JSON-RPC: the same error, as a transport-level JSON-RPC error (no request id was read).
    res.status(429).json({
      jsonrpc: '2.0',
      error: { code: -32000, message: error.message, data: error.toBody().error },
      id: null,
    });
    return;
  }
  res.status(429).json(error.toBody());
}

/** Per payer, then per tool; in shared mode both buckets are asked in one round trip to the store. */
function paidAdmission(
  settings: LimitSettings,
  memory: MemoryBuckets,
  shared: ReturnType<typeof sharedBuckets>,
  now: () => number,
): Limits['admit'] {
  return async (call) => {
    const toolRate = call.tool in settings.tools ? settings.tools[call.tool] : settings.tool;
    const asks = [
      ...(settings.payer
        ? [{ key: `payer:${payerKey(call.payer)}`, rate: settings.payer, scope: 'payer' as const }]
        : []),
      ...(toolRate ? [{ key: `tool:${call.tool}`, rate: toolRate, scope: 'tool' as const }] : []),
    ];
    const refusal = (scope: 'payer' | 'tool', retryAfterMs: number) =>
      scope === 'payer' ? limitedError('payer', retryAfterMs) : limitedError('tool', retryAfterMs, call.tool);
    if (!settings.shared) {
      // In memory, a payer over its limit takes nothing from the tool's bucket.
      for (const ask of asks) {
        const outcome = memory.take(ask.key, now(), ask.rate);
        if (outcome.type === 'limited') return refusal(ask.scope, outcome.retryAfterMs);
      }
      return undefined;
    }
    const outcomes = await shared.each(asks);
    for (const [i, outcome] of outcomes.entries())
      if (outcome.type === 'limited') return refusal(asks[i]!.scope, outcome.retryAfterMs);
    return undefined;
  };
}

/** Builds the limits of one runtime: in memory, or (shared) in the store with an in-memory gate in front of it. */
export function createLimits(
  settings: LimitSettings,
  buckets: RateBuckets,
  log: Logger,
  options: LimitsOptions = {},
): Limits {
  const now = options.now ?? Date.now;
  const memory = new MemoryBuckets();
  const gate = new MemoryBuckets();
  const shared = sharedBuckets(buckets, log, now);
  const ipRate = settings.ip;
  const perIp: RequestHandler = (req, res, next) => {
    if (!ipRate) return next();
    const key = `ip:${clientKey(req.ip ?? req.socket.remoteAddress)}`;
    // The in-memory bucket answers floods without touching the store; in shared mode the store then has the last word.
    const local = (settings.shared ? gate : memory).take(key, now(), ipRate);
    if (local.type === 'limited') return refuseIp(res, req.path, local.retryAfterMs);
    if (!settings.shared) return next();
    shared
      .one({ key, rate: ipRate })
      .then((outcome) => (outcome.type === 'limited' ? refuseIp(res, req.path, outcome.retryAfterMs) : next()), next);
  };

  let ticks = 0;
  const sweeper = setInterval(() => {
    memory.sweep(now());
    gate.sweep(now());
    if (settings.shared && ++ticks % STORE_PURGE_EVERY === 0) {
      buckets
        .purgeTokenBuckets(now())
        .catch((err: unknown) => log.warn('purging rate-limit buckets failed', { error: String(err) }));
    }
  }, SWEEP_MS);
  sweeper.unref();

  return { perIp, admit: paidAdmission(settings, memory, shared, now), close: () => clearInterval(sweeper) };
}
