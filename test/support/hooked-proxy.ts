import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the proxy holds it: the incoming request, its whole body and the response to write. */
export interface HeldRequest {
  req: IncomingMessage;
  res: ServerResponse;
  body: Buffer;
}

/** The target's answer to a passed-on request, before the proxy writes it. */
export interface HeldAnswer {
  status: number;
  headers: [string, string][];
  body: Buffer;
}

/** What a test does to requests: `before` may answer one itself, `after` may answer instead of the target's answer; both return whether they did. */
export interface ProxyHooks {
  before?(held: HeldRequest): boolean;
  after?(held: HeldRequest, answer: HeldAnswer): boolean;
}

/** A running proxy. */
export interface HookedProxy {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** The whole body of an incoming request. */
export async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Passes a held request on to `target` and reads its whole answer. */
async function passOn(target: string, { req, body }: HeldRequest): Promise<HeldAnswer> {
  const headers = Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k));
  const upstream = await fetch(target + req.url, {
    method: req.method!,
    headers: headers as [string, string][],
    ...(body.length > 0 ? { body } : {}),
  });
  const answer = Buffer.from(await upstream.arrayBuffer());
  const kept = [...upstream.headers].filter(([k]) => !['content-encoding', 'content-length'].includes(k));
  return { status: upstream.status, headers: kept, body: answer };
}

/** An HTTP proxy on a free port of 127.0.0.1 in front of `target` whose `hooks` may answer or replace answers. */
export async function startHookedProxy(target: string, hooks: ProxyHooks): Promise<HookedProxy> {
  const server = createServer((req, res) => {
    void (async () => {
      const held = { req, res, body: await bodyOf(req) };
      if (hooks.before?.(held)) return;
      const answer = await passOn(target, held);
      if (hooks.after?.(held, answer)) return;
      res.writeHead(answer.status, Object.fromEntries(answer.headers)).end(answer.body);
    })().catch(() => req.socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
