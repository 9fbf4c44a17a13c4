import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How a look-alike fails its next request(s):
 * - `429`: HTTP 429 with `Retry-After` (options.retryAfterSeconds, default 0) — retryable;
 * - `500`: HTTP 500 plain text — retryable;
 * - `slow`: answers normally but only after options.slowMs (set the client timeout below it);
 * - `reset`: destroys the connection without an answer (a network error) — retryable;
 * - `malformed`: HTTP 200, `content-type: application/json`, truncated JSON;
 * - `error200` / `empty` / `mismatch`: handed to the look-alike's own handler, which answers with its upstream's
 *   HTTP-200 error habit, an empty result, or a payload whose shape breaks the documented schema.
 */
export type FailureMode = '429' | '500' | 'slow' | 'reset' | 'malformed' | 'error200' | 'empty' | 'mismatch';

/** The modes a look-alike's own handler must implement. */
export type HandlerMode = Extract<FailureMode, 'error200' | 'empty' | 'mismatch'>;

/** One request as a look-alike handler sees it. */
export interface LookalikeRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  /** Parsed JSON body, or undefined when there was none or it was not JSON (see `rawBody`). */
  body: unknown;
  rawBody: string;
  /** Request headers (lower-case names), e.g. `authorization`. */
  headers: Record<string, string | string[] | undefined>;
}

/** What a look-alike handler answers: JSON (default status 200) or text. */
export interface LookalikeReply {
  status?: number;
  json?: unknown;
  text?: string;
  headers?: Record<string, string>;
}

/** Answers one request; `mode` is set when a handler-level failure was queued for it. */
export type LookalikeHandler = (
  req: LookalikeRequest,
  mode: HandlerMode | undefined,
) => LookalikeReply | Promise<LookalikeReply>;

/** Timing knobs shared by every look-alike. */
export interface LookalikeOptions {
  /** Delay of the `slow` mode; default 2000 ms. */
  slowMs?: number;
  /** `Retry-After` seconds sent with `429`; default 0 (keeps tests fast). */
  retryAfterSeconds?: number;
  /** JSON body of the `429` answer; default `{"error":"too many requests"}`. */
  rateLimitBody?: unknown;
}

/** A running look-alike upstream on 127.0.0.1. */
export interface Lookalike {
  /** Base URL, e.g. http://127.0.0.1:41234 (no trailing slash). */
  url: string;
  /** How many requests it received so far (failed ones included). */
  readonly requests: number;
  /** Makes the next `count` requests (default 1) that match `only` (default: any) fail in `mode`. */
  failNext(mode: FailureMode, count?: number, only?: (req: LookalikeRequest) => boolean): void;
  /** Stops listening and drops open connections. */
  stop(): Promise<void>;
}

interface Queued {
  mode: FailureMode;
  left: number;
  only: ((req: LookalikeRequest) => boolean) | undefined;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, reply: LookalikeReply): void {
  if (res.destroyed) return;
  const isText = reply.text !== undefined;
  const payload = isText ? reply.text! : JSON.stringify(reply.json ?? null);
  res.writeHead(reply.status ?? 200, {
    'content-type': isText ? 'text/plain; charset=utf-8' : 'application/json',
    ...reply.headers,
  });
  res.end(payload);
}

/** The request as a look-alike handler sees it: its body read, parsed as JSON when it is JSON. */
async function lookalikeRequest(req: IncomingMessage): Promise<LookalikeRequest> {
  const rawBody = await readBody(req);
  const parsedUrl = new URL(req.url ?? '/', 'http://127.0.0.1');
  let body: unknown;
  try {
    body = rawBody === '' ? undefined : JSON.parse(rawBody);
  } catch {
    body = undefined;
  }
  return {
    method: req.method ?? 'GET',
    path: parsedUrl.pathname,
    query: parsedUrl.searchParams,
    body,
    rawBody,
    headers: req.headers,
  };
}

/** One exchange as `answer` sees it. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  request: LookalikeRequest;
  handler: LookalikeHandler;
  options: LookalikeOptions;
  timers: Set<NodeJS.Timeout>;
}

/** Answers one request in the failure mode queued for it, or through the handler. */
async function answer(mode: FailureMode | undefined, x: Exchange): Promise<void> {
  const { req, res, request, handler, options, timers } = x;
  switch (mode) {
    case '429':
      return send(res, {
        status: 429,
        json: options.rateLimitBody ?? { error: 'too many requests' },
        headers: { 'retry-after': String(options.retryAfterSeconds ?? 0) },
      });
    case '500':
      return send(res, { status: 500, text: 'Internal Server Error' });
    case 'reset':
      req.socket.destroy();
      return;
    case 'malformed':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"result": [{"id": 1, "name": "trunc');
      return;
    case 'slow': {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          timers.delete(timer);
          resolve();
        }, options.slowMs ?? 2000);
        timers.add(timer);
      });
      return send(res, await handler(request, undefined));
    }
    case 'error200':
    case 'empty':
    case 'mismatch':
      return send(res, await handler(request, mode));
    case undefined:
      return send(res, await handler(request, undefined));
  }
}

/** Starts a look-alike upstream with the shared failure modes around `handler`. */
export async function startLookalikeServer(
  handler: LookalikeHandler,
  options: LookalikeOptions = {},
): Promise<Lookalike> {
  const queue: Queued[] = [];
  let requests = 0;
  const timers = new Set<NodeJS.Timeout>();

  const takeMode = (req: LookalikeRequest): FailureMode | undefined => {
    const index = queue.findIndex((q) => q.only === undefined || q.only(req));
    if (index < 0) return undefined;
    const entry = queue[index]!;
    entry.left -= 1;
    if (entry.left <= 0) queue.splice(index, 1);
    return entry.mode;
  };

  const server = createServer((req, res) => {
    requests += 1;
    void (async () => {
      const request = await lookalikeRequest(req);
      const mode = takeMode(request);
      return answer(mode, { req, res, request, handler, options, timers });
    })().catch((err: unknown) => {
      send(res, { status: 500, text: `look-alike handler failed: ${String(err)}` });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return requests;
    },
    failNext(mode, count = 1, only) {
      queue.push({ mode, left: count, only });
    },
    stop: async () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
