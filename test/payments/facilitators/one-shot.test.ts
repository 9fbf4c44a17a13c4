import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpFacilitatorClient } from '../../../src/payments/facilitators/facilitator-http.js';

let server: Server | undefined;

/** A facilitator whose `/supported` answers as `answer` says; counts the connections it accepted. */
async function facilitator(answer: (res: import('node:http').ServerResponse) => void): Promise<string> {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(res));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

const options = { timeoutMs: 300, settleTimeoutMs: 300, headers: () => ({ authorization: 'Bearer s3cret-token' }) };

describe('asking a facilitator /supported on a connection of its own', () => {
  it('reads the kinds it lists', async () => {
    const kinds = [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }];
    const url = await facilitator((res) =>
      res.writeHead(200).end(JSON.stringify({ kinds, extensions: [], signers: {} })),
    );
    const client = createHttpFacilitatorClient(url, options);
    expect((await client.getSupported()).kinds).toEqual(kinds);
    await client.close();
  });

  it('gives up with a timeout error naming the operation when the facilitator never answers', async () => {
    const url = await facilitator(() => undefined);
    const client = createHttpFacilitatorClient(url, options);
    await expect(client.getSupported()).rejects.toMatchObject({ name: 'FacilitatorTimeoutError' });
    await client.close();
  });

  it('refuses an answer longer than a megabyte sent without a length', async () => {
    const url = await facilitator((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = 'x'.repeat(64 * 1024);
      for (let i = 0; i < 20; i++) res.write(chunk);
      res.end();
    });
    const client = createHttpFacilitatorClient(url, options);
    await expect(client.getSupported()).rejects.toThrow(/longer than 1048576 bytes/);
    await client.close();
  });

  it('names our refused credentials without echoing the token', async () => {
    const url = await facilitator((res) => res.writeHead(401).end('{"error":"bad token s3cret-token"}'));
    const client = createHttpFacilitatorClient(url, options);
    const err = await client.getSupported().catch((e: Error) => e);
    expect(String(err)).toMatch(/refused our credentials \(HTTP 401 on supported\)/);
    expect(String(err)).not.toContain('s3cret-token');
    await client.close();
  });
});
