import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { SolanaLedger } from './solana-ledger.js';
import { RpcError, solanaMethods, type SolanaStatus } from './solana-methods.js';

/**
 * A look-alike Solana JSON-RPC server on 127.0.0.1 backed by an in-process litesvm ledger. It implements exactly
 * the methods the official `@x402/svm` client and facilitator call, plus the ones reconciliation and the agent's
 * chain check use: `getAccountInfo`, `getLatestBlockhash`, `simulateTransaction`, `sendTransaction`,
 * `getSignatureStatuses`, `isBlockhashValid`, `getSignaturesForAddress`, `getTransaction` (json or base64; the
 * history is the ledger's, so its set-up transactions are listed too). Any other method is answered with JSON-RPC error -32601 and recorded in `unknownMethods`.
 *
 * Deviation from a real cluster, on purpose: a transaction that can never land (bad or missing signature,
 * unknown/expired blockhash, fee payer without lamports) is refused by `sendTransaction` with a JSON-RPC error at
 * once, where a real RPC node with `skipPreflight` would return the signature and silently drop it (the caller
 * would then wait for a confirmation that never comes). A transaction that lands but fails in a program is
 * recorded with its error, as on a real cluster.
 */
export interface SolanaRpc {
  /** Base URL, e.g. `http://127.0.0.1:54321`. */
  url: string;
  /** Requests received per method. */
  calls: Map<string, number>;
  /** Methods asked for that the look-alike does not implement (a test asserts this stays empty). */
  unknownMethods: string[];
  /** Signatures of the transactions that landed successfully, in order. */
  landed: string[];
  /** Signatures of the transactions that landed and failed in a program. */
  failed: string[];
  close(): Promise<void>;
}

/** Answers one JSON-RPC request with `methods`, counting it and recording a method the look-alike does not have. */
function handleRpc(
  methods: Record<string, (params: unknown[]) => unknown>,
  seen: { calls: Map<string, number>; unknownMethods: string[] },
  request: unknown,
): unknown {
  const { calls, unknownMethods } = seen;
  const { id = null, method, params = [] } = (request ?? {}) as { id?: unknown; method?: unknown; params?: unknown[] };
  if (typeof method !== 'string') return { jsonrpc: '2.0', id, error: { code: -32600, message: 'Invalid request' } };
  calls.set(method, (calls.get(method) ?? 0) + 1);
  const impl = methods[method];
  if (!impl) {
    unknownMethods.push(method);
    return {
      jsonrpc: '2.0',
      id,
      error: { code: -32601, message: `Method not found: ${method} (not implemented by the look-alike)` },
    };
  }
  try {
    return { jsonrpc: '2.0', id, result: impl(Array.isArray(params) ? params : []) };
  } catch (err) {
    if (err instanceof RpcError)
      return {
        jsonrpc: '2.0',
        id,
        error: { code: err.code, message: err.message, ...(err.data ? { data: err.data } : {}) },
      };
    return { jsonrpc: '2.0', id, error: { code: -32603, message: `Internal error: ${(err as Error).message}` } };
  }
}

/** Reads one HTTP request (a JSON-RPC request or a batch) and writes the answers `handle` gives. */
async function respond(
  req: IncomingMessage,
  res: ServerResponse,
  handle: (request: unknown) => unknown,
): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    body = undefined;
  }
  const answer =
    body === undefined
      ? { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }
      : Array.isArray(body)
        ? body.map(handle)
        : handle(body);
  const text = JSON.stringify(answer, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v));
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Starts the look-alike JSON-RPC server for a ledger on a free port of 127.0.0.1. */
export async function startSolanaRpc(ledger: SolanaLedger): Promise<SolanaRpc> {
  const calls = new Map<string, number>();
  const unknownMethods: string[] = [];
  const landed: string[] = [];
  const failed: string[] = [];
  const statuses = new Map<string, SolanaStatus>();

  const methods = solanaMethods(ledger, { statuses, landed, failed });

  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    respond(req, res, (request) => handleRpc(methods, { calls, unknownMethods }, request)).catch(() => res.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    unknownMethods,
    landed,
    failed,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        for (const socket of sockets) socket.destroy();
      }),
  };
}
