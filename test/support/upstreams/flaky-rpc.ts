import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * How a flaky RPC answers a request that matches a rule:
 * - `429`: HTTP 429 with `Retry-After: 0`, not forwarded (a rate limiter in front of the node);
 * - `500`: HTTP 500 plain text, not forwarded;
 * - `garbage`: HTTP 200 `application/json` with a body that is not JSON, not forwarded;
 * - `wrong`: HTTP 200 with JSON that is no JSON-RPC answer (no `result`, no `error`), not forwarded;
 * - `hang`: never answered until `heal()` or `stop()` (then a 504), not forwarded;
 * - `lose`: forwarded to the node, which acts on it, and then answered 502: the answer is lost, the effect is not.
 */
export type RpcFault = '429' | '500' | 'garbage' | 'wrong' | 'hang' | 'lose';

/** What a rule sees of a request: the JSON-RPC method (when the body is JSON-RPC), the HTTP method and the path. */
export interface RpcRequestInfo {
  rpcMethod: string | undefined;
  httpMethod: string;
  path: string;
}

/** A forwarding proxy in front of any HTTP RPC (EVM, Solana and Stellar JSON-RPC, algod REST) that fails on demand. */
export interface FlakyRpc {
  url: string;
  /** Requests received, by JSON-RPC method (or `GET /path` for REST), failed ones included. */
  calls: Map<string, number>;
  /** From now on, requests matching `only` (default: all) are answered with `fault`; `count` limits how many (default: all). */
  fail(fault: RpcFault, only?: (req: RpcRequestInfo) => boolean, count?: number): void;
  /** Removes every rule and answers the requests left hanging with a 504. */
  heal(): void;
  stop(): Promise<void>;
}

/** Matches JSON-RPC requests of the given methods. */
export const rpcMethods =
  (...methods: string[]) =>
  (req: RpcRequestInfo): boolean =>
    req.rpcMethod !== undefined && methods.includes(req.rpcMethod);

/** Matches REST requests whose path starts with one of the prefixes (algod: `/v2/transactions`). */
export const restPaths =
  (...prefixes: string[]) =>
  (req: RpcRequestInfo): boolean =>
    prefixes.some((p) => req.path.startsWith(p));

interface Rule {
  fault: RpcFault;
  only: (req: RpcRequestInfo) => boolean;
  left: number;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function rpcMethodOf(body: Buffer): string | undefined {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { method?: unknown } | Array<{ method?: unknown }>;
    const first = Array.isArray(parsed) ? parsed[0] : parsed;
    return typeof first?.method === 'string' ? first.method : undefined;
  } catch {
    return undefined;
  }
}

/** Sends the request on to `base` (its path and query appended) and reads the whole answer. */
async function forwardTo(
  base: string,
  req: IncomingMessage,
  body: Buffer,
): Promise<{ status: number; type: string; bytes: Buffer }> {
  const headers: Record<string, string> = {};
  for (const name of ['content-type', 'accept', 'x-algo-api-token']) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  const method = req.method ?? 'GET';
  const res = await fetch(base + (req.url ?? '/'), {
    method,
    headers,
    ...(method === 'GET' || method === 'HEAD' ? {} : { body }),
  });
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? 'application/octet-stream',
    bytes: Buffer.from(await res.arrayBuffer()),
  };
}

/** Writes one answer, unless the connection is gone or already answered; a 429 says to retry at once. */
function answer(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  if (res.destroyed || res.headersSent) return;
  res.writeHead(status, { 'content-type': type, ...(status === 429 ? { 'retry-after': '0' } : {}) });
  res.end(body);
}

/** Answers one request with its fault, or with what the target answered. */
async function respond(
  fault: RpcFault | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  where: { base: string; hanging: Set<ServerResponse> },
): Promise<void> {
  switch (fault) {
    case '429':
      return answer(res, 429, 'application/json', JSON.stringify({ error: 'too many requests' }));
    case '500':
      return answer(res, 500, 'text/plain', 'Internal Server Error');
    case 'garbage':
      return answer(res, 200, 'application/json', '<html><body>upstream error</body></html>');
    case 'wrong':
      return answer(res, 200, 'application/json', JSON.stringify({ ok: true, note: 'not a JSON-RPC answer' }));
    case 'hang':
      where.hanging.add(res);
      return;
    case 'lose': {
      await forwardTo(where.base, req, body);
      return answer(res, 502, 'text/plain', 'Bad Gateway');
    }
    case undefined: {
      const got = await forwardTo(where.base, req, body);
      return answer(res, got.status, got.type, got.bytes);
    }
  }
}

/** Starts the proxy on 127.0.0.1 in front of `target` (a base URL; request paths and queries are appended). */
export async function startFlakyRpc(target: string): Promise<FlakyRpc> {
  const base = target.replace(/\/$/, '');
  let rules: Rule[] = [];
  const calls = new Map<string, number>();
  const hanging = new Set<ServerResponse>();
  const sockets = new Set<Socket>();

  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
      const info: RpcRequestInfo = { rpcMethod: rpcMethodOf(body), httpMethod: req.method ?? 'GET', path };
      const key = info.rpcMethod ?? `${info.httpMethod} ${path}`;
      calls.set(key, (calls.get(key) ?? 0) + 1);
      const rule = rules.find((r) => r.left > 0 && r.only(info));
      if (rule) rule.left -= 1;
      return respond(rule?.fault, req, res, body, { base, hanging });
    })().catch((err: unknown) => answer(res, 500, 'text/plain', `flaky proxy failed: ${String(err)}`));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const release = () => {
    for (const res of hanging) answer(res, 504, 'text/plain', 'Gateway Timeout');
    hanging.clear();
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    fail(fault, only = () => true, count = Number.POSITIVE_INFINITY) {
      rules.push({ fault, only, left: count });
    },
    heal() {
      rules = [];
      release();
    },
    stop: async () => {
      release();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
