/**
 * The connections to one remote facilitator: an undici Pool whose idle sockets are closed before the facilitator
 * closes them, and what the HTTP client needs to send a request again after a stale connection failed it.
 *
 * A facilitator closes an idle keep-alive connection after its own timeout (Node's default is 5 s, usually announced
 * as `Keep-Alive: timeout=5`). A request written onto a connection the facilitator has just closed fails although the
 * facilitator never read it. Three things keep that from failing a paying caller:
 * - idle connections are kept `defaultMs` (4 s) when the facilitator announces nothing, else `marginMs` (1 s) less than
 *   it announces (undici's `keepAliveTimeout` and `keepAliveTimeoutThreshold`);
 * - undici's own idle timer counts event-loop ticks and stands still while the loop is blocked, so a connection is
 *   also checked by the wall clock when a request is about to use it, and closed first when it idled too long;
 * - a settle first lets the event loop poll once ({@link afterIoTurn}), so a close that arrived while the loop was
 *   blocked is seen before the settle could be written onto that connection;
 * - {@link resendable} says when a failed request may be sent again on a fresh connection: verify and supported
 *   always (they change nothing), settle only when provably no complete request went out.
 */
import type { Socket } from 'node:net';
import type { Client, Dispatcher, Pool } from 'undici';

/** How long idle connections to a facilitator are kept. */
export interface KeepAlive {
  /** Kept this long when the facilitator announces no `Keep-Alive: timeout=N`. */
  defaultMs: number;
  /** Closed this long before the time the facilitator announces. */
  marginMs: number;
}

/** 4 s when the facilitator announces nothing, else 1 s before the time it announces (Node's own default is 5 s). */
export const FACILITATOR_KEEP_ALIVE: KeepAlive = { defaultMs: 4_000, marginMs: 1_000 };

/** What is known of one failed request: whether undici began writing it, and on a connection that served earlier ones. */
export interface AttemptFacts {
  started: boolean;
  reused: boolean;
}

const factsOf = new WeakMap<object, AttemptFacts>();

/** The facts of a request that failed with `err` in a facilitator pool (undefined for any other error). */
export function attemptFacts(err: unknown): AttemptFacts | undefined {
  return typeof err === 'object' && err !== null ? factsOf.get(err) : undefined;
}

/** Errors of a connection that closed under a request (reset, broken pipe, "other side closed"). */
const CONNECTION_LOST = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET']);

/**
 * True when a request that failed with `err` may be sent once more on a fresh connection: its connection was lost,
 * and either undici never began writing it, or it went out on a reused connection and is a verify or `/supported`
 * (they change nothing). A settle is sent again only when it provably never went out whole: undici had not begun
 * writing it, or the kernel refused the write itself (`syscall: 'write'`: the facilitator had already reset the
 * connection, so the end of the body never left). Any other failed settle has an unknown outcome and is never re-sent.
 */
export function resendable(operation: 'verify' | 'settle' | 'supported', err: unknown): boolean {
  const facts = attemptFacts(err);
  const { code, syscall } = (err ?? {}) as { code?: unknown; syscall?: unknown };
  if (!facts || typeof code !== 'string' || !CONNECTION_LOST.has(code)) return false;
  if (!facts.started) return true;
  if (!facts.reused) return false;
  return operation !== 'settle' || syscall === 'write';
}

/**
 * Resolves after the event loop has polled for I/O once: a close by the facilitator that arrived while this process was
 * busy (the loop blocked) is seen, and its connection dropped, before a settle could be written onto it.
 */
export async function afterIoTurn(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
}

/** The `timeout=N` of a `Keep-Alive` header in undici's raw header list, in ms. */
function announcedMs(raw: readonly (Buffer | string)[] | null | undefined): number | undefined {
  for (let i = 0; raw && i + 1 < raw.length; i += 2) {
    if (String(raw[i]).toLowerCase() !== 'keep-alive') continue;
    const match = /timeout\s*=\s*(\d+)/i.exec(String(raw[i + 1]));
    if (match) return Number(match[1]) * 1000;
  }
  return undefined;
}

/** One connection of the pool, by wall clock. */
interface Line {
  socket?: Socket;
  /** Requests completed on the current socket. */
  served: number;
  idleSince: number;
  /** How long the current socket may idle: learned from the facilitator's Keep-Alive header. */
  idleLimitMs: number;
}

type Handler = Required<
  Pick<Dispatcher.DispatchHandler, 'onConnect' | 'onHeaders' | 'onData' | 'onComplete' | 'onError'>
> &
  Dispatcher.DispatchHandler;

/** The request's handler, noting on the line when it completes and which Keep-Alive the facilitator announced. */
function watched(handler: Dispatcher.DispatchHandler, line: Line, keepAlive: KeepAlive): Dispatcher.DispatchHandler {
  const h = handler as Handler;
  const facts: AttemptFacts = { started: false, reused: false };
  return {
    onConnect: (abort) => {
      facts.started = true;
      facts.reused = line.served > 0;
      h.onConnect(abort);
    },
    onHeaders: (status, headers, resume, text) => {
      if (status >= 200) {
        const announced = announcedMs(headers);
        line.idleLimitMs = announced === undefined ? keepAlive.defaultMs : announced - keepAlive.marginMs;
      }
      return h.onHeaders(status, headers, resume, text);
    },
    onData: (chunk) => h.onData(chunk),
    onComplete: (trailers) => {
      line.served += 1;
      line.idleSince = Date.now();
      h.onComplete(trailers);
    },
    onError: (err) => {
      line.idleSince = Date.now();
      if (typeof err === 'object' && err !== null) factsOf.set(err, facts);
      h.onError(err);
    },
    onUpgrade: (status, headers, socket) => h.onUpgrade?.(status, headers, socket),
    onResponseStarted: () => h.onResponseStarted?.(),
    onBodySent: (size, total) => h.onBodySent?.(size, total),
  };
}

type Undici = typeof import('undici');

/** A Client that closes its socket before reuse when it idled longer than the facilitator keeps it, by wall clock. */
function guardedClient(undici: Undici, keepAlive: KeepAlive) {
  return class GuardedClient extends undici.Client {
    private readonly line: Line;

    constructor(origin: string | URL, options: Client.Options) {
      const line: Line = { served: 0, idleSince: Date.now(), idleLimitMs: keepAlive.defaultMs };
      const connect = options.connect as import('undici').buildConnector.connector;
      super(origin, {
        ...options,
        connect: (opts, callback) =>
          connect(opts, (...args) => {
            const socket = args[1];
            if (socket) Object.assign(line, { socket, served: 0, idleSince: Date.now() });
            callback(...args);
          }),
      });
      this.line = line;
    }

    override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      const { line } = this;
      const idle = this.stats.running === 0 && this.stats.pending === 0;
      if (line.socket && !line.socket.destroyed && line.served > 0 && idle) {
        if (Date.now() - line.idleSince >= line.idleLimitMs) line.socket.destroy();
      }
      return super.dispatch(options, watched(handler, line, keepAlive));
    }
  };
}

/** The connections to one facilitator origin. */
export interface FacilitatorPool {
  /** Sends a request on a kept connection (closed first when it idled too long). */
  request(options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
  /** Sends a request on a new connection of its own, closed after the answer. */
  requestFresh(options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
  close(): Promise<void>;
}

/** Opens the pool of one facilitator origin (undici is loaded here, with the first request, not at start-up). */
export async function openFacilitatorPool(
  origin: string,
  connections: number,
  keepAlive: KeepAlive = FACILITATOR_KEEP_ALIVE,
): Promise<FacilitatorPool> {
  const undici = await import('undici');
  const Guarded = guardedClient(undici, keepAlive);
  const pool: Pool = new undici.Pool(origin, {
    connections,
    keepAliveTimeout: keepAlive.defaultMs,
    keepAliveTimeoutThreshold: keepAlive.marginMs,
    factory: (o, options) => new Guarded(o, options as Client.Options),
  });
  return {
    request: (options) => pool.request(options),
    requestFresh: async (options) => {
      const client = new undici.Client(origin, { keepAliveTimeout: keepAlive.defaultMs });
      try {
        return await client.request({ ...options, reset: true });
      } finally {
        // Closes once the answer is read (close waits for the running request).
        client.close().catch(() => undefined);
      }
    },
    close: () => pool.close(),
  };
}
