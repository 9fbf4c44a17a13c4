import type { Logger } from '../shared/log.js';
import type { Metrics } from '../observe/metrics.js';

/** The reason the server stops after an uncaught exception (passed to the stop function; it exits with 1). */
export const UNCAUGHT_EXCEPTION = 'uncaughtException';

/** URLs reduced to their origin: an RPC URL often carries an API key in its path or query. */
function withoutUrlPaths(text: string): string {
  return text.replace(/\bhttps?:\/\/[^\s"'<>]+/g, (url) => {
    try {
      return new URL(url).origin;
    } catch {
      return '[url]';
    }
  });
}

/**
 * What is logged about an unhandled failure: its type, the first line of its message and the first frame of its
 * stack, bounded, with URLs cut to their origin (never request bodies, payloads or keys an error text may carry).
 */
export function describeFailure(reason: unknown): { error: string; type: string; at?: string } {
  const err = reason instanceof Error ? reason : undefined;
  const message = err ? err.message : typeof reason === 'string' ? reason : (JSON.stringify(reason) ?? String(reason));
  const line = withoutUrlPaths(message.split('\n', 1)[0]!.trim()).slice(0, 300);
  const at = err?.stack
    ?.split('\n')
    .find((l) => l.trim().startsWith('at '))
    ?.trim();
  return {
    error: line,
    type: err ? err.name : typeof reason,
    ...(at ? { at: withoutUrlPaths(at).slice(0, 300) } : {}),
  };
}

/**
 * The process-level failure policy of the server commands (`serve`, `stdio`).
 *
 * Unhandled rejection: a promise some code (usually a library: an RPC request it started and abandoned on an early
 * return) let reject with nobody listening. It says nothing about our own state, and every call path has its own
 * error handling, so the server logs it at error level with context, counts it in `/metrics`
 * (`tollbooth_unhandled_rejections_total`) and keeps serving. Without a listener, Node would end the process and
 * with it every call in flight.
 *
 * Uncaught exception: something threw outside any handler and may have left state half-updated. Node's advice is
 * not to carry on, and we follow it: log, then the same graceful stop as SIGTERM (no new calls, running calls finish
 * and settle within SHUTDOWN_TIMEOUT_MS, so paid work is not lost), then exit with 1 for the supervisor to restart
 * a clean process. A claim a call could not finish is reconciled against the chain by the next process.
 */
export function installProcessPolicy(
  log: Logger,
  metrics: Pick<Metrics, 'unhandledRejection'>,
  stop: (why: string) => void,
): () => void {
  const onRejection = (reason: unknown) => {
    metrics.unhandledRejection();
    log.error('unhandled promise rejection; kept serving', describeFailure(reason));
  };
  const onException = (err: Error) => {
    log.error('uncaught exception; stopping (running calls finish first), then exiting with 1', describeFailure(err));
    stop(UNCAUGHT_EXCEPTION);
  };
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  return () => {
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
  };
}
