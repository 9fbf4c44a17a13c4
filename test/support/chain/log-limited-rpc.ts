import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { bodyOf } from '../hooked-proxy.js';

/** An RPC in front of a node whose `eth_getLogs` is limited as public providers limit it. */
export interface LogLimitedRpc {
  url: string;
  /** Block ranges of every `eth_getLogs` request, refused ones included. */
  ranges: Array<{ from: bigint; to: bigint; refused: boolean }>;
  /** Most blocks one `eth_getLogs` may span (more is refused with a JSON-RPC error, as Alchemy or Base's RPC do). */
  maxBlocks: bigint;
  /** When true, `eth_getLogs` answers no logs at all (a node whose log history was pruned). */
  pruned: boolean;
  stop(): Promise<void>;
}

const readBody = async (req: IncomingMessage): Promise<string> => (await bodyOf(req)).toString('utf8');

/** Starts the proxy on 127.0.0.1 in front of `target`; everything but `eth_getLogs` is forwarded as is. */
export async function startLogLimitedRpc(target: string, maxBlocks = 1_000_000n): Promise<LogLimitedRpc> {
  const sockets = new Set<Socket>();
  const state: LogLimitedRpc = {
    url: '',
    ranges: [],
    maxBlocks,
    pruned: false,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
  const server = createServer((req, res) => {
    void readBody(req).then(async (body) => {
      const call = JSON.parse(body) as { id: unknown; method: string; params?: Array<Record<string, string>> };
      const reply = (answer: Record<string, unknown>) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, ...answer }));
      };
      if (call.method === 'eth_getLogs') {
        const filter = call.params?.[0] ?? {};
        const from = BigInt(filter.fromBlock ?? '0x0');
        const to = BigInt(filter.toBlock ?? '0x0');
        const refused = to - from + 1n > state.maxBlocks;
        state.ranges.push({ from, to, refused });
        if (refused)
          return reply({ error: { code: -32005, message: `block range exceeds ${state.maxBlocks} blocks` } });
        if (state.pruned) return reply({ result: [] });
      }
      const forwarded = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      res.writeHead(forwarded.status, { 'content-type': 'application/json' });
      res.end(await forwarded.text());
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
