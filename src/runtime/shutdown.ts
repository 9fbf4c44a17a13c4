import type { Server as HttpServer } from 'node:http';
import type { RequestHandler } from 'express';
import { ToolError } from '../shared/errors.js';
import { InFlight } from '../shared/in-flight.js';
import type { Logger } from '../shared/log.js';
import { sendError } from '../http/encode.js';

/** Counts HTTP requests being answered and, once closing, refuses new ones with 503 `shutting_down`. */
export class RequestGate {
  private readonly requests = new InFlight();
  private closing = false;

  /** The express middleware; mount it before every route. Long-lived MCP event streams (GET /mcp) are not counted. */
  readonly middleware: RequestHandler = (req, res, next) => {
    if (req.method === 'GET' && req.path.replace(/\/+$/, '') === '/mcp' && !this.closing) return next();
    // Counted until written out, refusals included, so closing the connections never cuts an answer short.
    this.requests.enter();
    res.once('close', () => this.requests.leave());
    if (!this.closing) return next();
    res.setHeader('Connection', 'close');
    res.setHeader('Retry-After', '5');
    const error = new ToolError(
      'shutting_down',
      'This server is shutting down and takes no new requests; retry in a few seconds (another instance, or this one restarted, will answer).',
    );
    sendError(res, error);
  };

  /** Refuses every request from now on. */
  close(): void {
    this.closing = true;
  }

  /** Resolves true once no counted request is being answered, or false when `timeoutMs` passed first. */
  idle(timeoutMs: number): Promise<boolean> {
    return this.requests.drain(timeoutMs);
  }
}

/** What a graceful HTTP shutdown needs: the server, its gate, the runtime's calls and how to end MCP sessions. */
export interface ShutdownParts {
  server: HttpServer;
  gate: RequestGate;
  /** The calls running (the runtime's tracker). */
  calls: InFlight;
  closeSessions: () => Promise<void>;
  log: Logger;
}

/** After the time limit, calls still running are aborted (claims released, nothing settled) and get this long to unwind. */
const UNWIND_MS = 2_000;

/**
 * Stops listening, refuses requests on open connections (503), lets running calls finish and settle and their
 * answers go out within `timeoutMs`, then ends MCP sessions and every connection. Resolves whether all finished in time.
 */
export async function shutdownHttp(parts: ShutdownParts, timeoutMs: number): Promise<boolean> {
  const { server, gate, calls, closeSessions, log } = parts;
  const deadline = Date.now() + timeoutMs;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  gate.close();
  server.closeIdleConnections();
  const drained = (await calls.drain(deadline - Date.now())) && (await gate.idle(deadline - Date.now()));
  if (!drained) {
    log.error('shutdown time limit reached; aborting the calls still running (they are not settled)', {
      inFlight: calls.count,
      timeoutMs,
    });
  }
  // Ending sessions and connections aborts whatever still runs; an aborted call releases its claim before the store closes.
  await closeSessions();
  server.closeAllConnections();
  if (!drained) await calls.drain(UNWIND_MS);
  await closed;
  return drained;
}
