import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { x402Facilitator } from '@x402/core/facilitator';

/** An official `x402Facilitator` served over the standard HTTP API, counting the calls it answers. */
export interface HttpFacilitator {
  url: string;
  calls: { verify: number; settle: number; supported: number };
  close(): Promise<void>;
}

async function bodyOf(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
}

/** Serves `facilitator` at `GET /supported`, `POST /verify` and `POST /settle` on 127.0.0.1 at a free port. */
export async function serveFacilitator(facilitator: x402Facilitator): Promise<HttpFacilitator> {
  const calls = { verify: 0, settle: 0, supported: 0 };
  const server = createServer((req, res) => {
    const answer = (status: number, value: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    void (async () => {
      const body = await bodyOf(req);
      if (req.method === 'GET' && req.url === '/supported') {
        calls.supported++;
        return answer(200, facilitator.getSupported());
      }
      const args = [body.paymentPayload, body.paymentRequirements] as Parameters<x402Facilitator['verify']>;
      if (req.method === 'POST' && req.url === '/verify') {
        calls.verify++;
        return answer(200, await facilitator.verify(...args));
      }
      if (req.method === 'POST' && req.url === '/settle') {
        calls.settle++;
        return answer(200, await facilitator.settle(...args));
      }
      return answer(404, { error: 'not found' });
    })().catch((err: unknown) => answer(500, { error: String((err as Error)?.message ?? err) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
