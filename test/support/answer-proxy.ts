import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a seller that, for the next paid requests (those carrying PAYMENT-SIGNATURE or X-PAYMENT, or
 * an MCP tools/call with an x402 payment in `_meta`), lets the request reach the seller (which runs the tool and
 * settles) and then does one thing to the answer:
 * - `cut`: drops the connection as soon as the answer starts coming back (the answer is lost);
 * - `late`: holds the answer for `ms` before passing it on (it arrives after the client gave up);
 * - `error500`: replaces the answer by an HTTP 500 (the seller settled, the client is told it failed);
 * - `refuse500`: never lets the request reach the seller and answers HTTP 500 (nothing was settled).
 */
export type AnswerFault = { type: 'cut' } | { type: 'late'; ms: number } | { type: 'error500' } | { type: 'refuse500' };

/** The proxy and its controls. */
export interface AnswerProxy {
  url: string;
  /** Applies `fault` to the next `n` paid requests. */
  arm(fault: AnswerFault, n?: number): void;
  /** Paid requests a fault was applied to so far. */
  applied(): number;
  /**
   * Sends what comes to the proxy to another seller from now on (the same origin, answered by `target`: as a seller
   * restarted with other settings); the open connections are closed, so the next request reaches `target`.
   */
  switchTo(target: string): void;
  close(): Promise<void>;
}

// A paid HTTP request's header, or an MCP tools/call's x402 payment in `_meta` (`x402/payment`, x402-mcp's `x402.payment`).
const PAID = /\r\n(payment-signature|x-payment):|"x402[./]payment"/i;
const ERROR_500 =
  'HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: 58\r\n\r\n{"error":{"code":"internal","message":"upstream crashed"}}';

/** One connection's parts as the relay sees them. */
interface Link {
  client: Socket;
  upstream: Socket;
  timers: Set<NodeJS.Timeout>;
  end(): void;
}

/** Passes one chunk of the server's answer to the client, or cuts, replaces or delays it as the fault says. */
function relay(chunk: Buffer, fault: AnswerFault | undefined, link: Link): void {
  const { client, upstream, timers } = link;
  if (fault?.type === 'cut') return link.end();
  if (fault?.type === 'error500') {
    client.end(ERROR_500);
    upstream.destroy();
    return;
  }
  if (fault?.type === 'late') {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!client.destroyed) client.write(chunk);
    }, fault.ms);
    timers.add(timer);
    return;
  }
  client.write(chunk);
}

/** Starts the proxy on 127.0.0.1 in front of `target` (an http:// base URL). */
export async function startAnswerProxy(target: string): Promise<AnswerProxy> {
  let { hostname, port } = new URL(target);
  let armed: { fault: AnswerFault; left: number } | undefined;
  let applied = 0;
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    let upstream: Socket | undefined;
    let fault: AnswerFault | undefined;
    const end = () => {
      client.destroy();
      upstream?.destroy();
    };
    const open = () => {
      upstream = connect(Number(port), hostname);
      sockets.add(upstream);
      upstream.on('data', (chunk: Buffer) => relay(chunk, fault, { client, upstream: upstream!, timers, end }));
      upstream.on('close', () => (fault?.type === 'late' ? undefined : end())).on('error', end);
    };
    client.on('data', (chunk: Buffer) => {
      if (!fault && armed && armed.left > 0 && PAID.test(chunk.toString('latin1'))) {
        fault = armed.fault;
        armed.left -= 1;
        applied += 1;
      }
      if (fault?.type === 'refuse500') {
        client.end(ERROR_500);
        return;
      }
      if (!upstream) open();
      upstream!.write(chunk);
    });
    client.on('close', () => (fault?.type === 'late' ? undefined : end())).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arm: (fault, n = 1) => void (armed = { fault, left: n }),
    applied: () => applied,
    switchTo: (next) => {
      ({ hostname, port } = new URL(next));
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
