import { connect, createServer, type Socket } from 'node:net';

/** A TCP proxy on 127.0.0.1 in front of one server (the test PostgreSQL), whose link the test can cut and restore. */
export interface TcpProxy {
  port: number;
  /** Drops every open connection and refuses new ones at once, as a stopped or unreachable server does. */
  cut(): void;
  /** Forwards new connections again. */
  restore(): void;
  stop(): Promise<void>;
}

/** Starts a TCP proxy forwarding to `host:port`; every accepted connection gets its own upstream connection. */
export async function startTcpProxy(host: string, port: number): Promise<TcpProxy> {
  let cut = false;
  const open = new Set<Socket>();
  const track = (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  };
  const server = createServer((client) => {
    if (cut) {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(port, host);
    track(client);
    track(upstream);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    cut: () => {
      cut = true;
      for (const socket of open) socket.resetAndDestroy();
    },
    restore: () => {
      cut = false;
    },
    stop: async () => {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
