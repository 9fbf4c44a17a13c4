/** Helpers of the upstream client's retry loop: the retryable failure type, Retry-After parsing, abortable sleep. */

/** A retryable failure of one upstream attempt (the only kind p-retry retries). */
export class AttemptFailure extends Error {
  constructor(
    readonly kind: 'timeout' | 'rate_limited' | 'unavailable',
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** Longest Retry-After we wait for inside one call; a longer one fails the call at once (the caller is waiting). */
export const MAX_RETRY_AFTER_MS = 10_000;

/** Parses a Retry-After header (delta seconds or HTTP date) into milliseconds. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
