import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRequest, readChallenge, send } from '../../src/agent/http.js';
import { McpRemotes } from '../../src/agent/mcp-remote.js';

const challenge: PaymentRequired = {
  x402Version: 2,
  error: 'Payment required',
  resource: { url: 'http://127.0.0.1/api/x', description: 'x', mimeType: 'application/json' },
  accepts: [
    {
      scheme: 'exact',
      network: 'eip155:8453',
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      amount: '1000',
      payTo: '0x00000000000000000000000000000000DeaDBeef',
      maxTimeoutSeconds: 300,
      extra: { name: 'USD Coin', version: '2' },
    },
  ],
};
const receipt = { success: true, transaction: '0xabc', network: 'eip155:8453', payer: '0xPayer' } as const;

let server: Server;
let base: string;
const seen: Array<{ method?: string; url?: string; body: string; headers: IncomingMessage['headers'] }> = [];

/** A look-alike remote: answers by path, records what it received. */
function route(req: IncomingMessage, res: ServerResponse, body: string): void {
  seen.push({ method: req.method, url: req.url, body, headers: req.headers });
  const path = (req.url ?? '').split('?')[0];
  if (path === '/ok') {
    res.writeHead(200, {
      'content-type': 'application/json',
      'payment-response': encodePaymentResponseHeader(receipt),
    });
    res.end(JSON.stringify({ echo: body }));
  } else if (path === '/paid') {
    res.writeHead(402, {
      'content-type': 'application/json',
      'payment-required': encodePaymentRequiredHeader(challenge),
    });
    res.end('{}');
  } else if (path === '/v1') {
    res.writeHead(402, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        x402Version: 1,
        error: 'X-PAYMENT header is required',
        accepts: [
          {
            scheme: 'exact',
            network: 'base',
            asset: '0x1',
            payTo: '0x2',
            maxAmountRequired: '1000',
            resource: 'r',
            description: '',
            mimeType: '',
            maxTimeoutSeconds: 60,
          },
        ],
      }),
    );
  } else if (path === '/pending') {
    res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '10' });
    res.end(JSON.stringify({ error: { code: 'settlement_pending', message: 'later', retryable: true } }));
  } else if (path === '/hang') {
    // never answers
  } else {
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('nothing here');
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => route(req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const signal = new AbortController().signal;
/** The MCP endpoints `send` would reach (none here: every request is plain HTTP). */
const remotes = new McpRemotes();

describe('building the request of a call from the tool definition', () => {
  it('puts a GET input in the query string (arrays repeated, objects as JSON, nulls left out)', () => {
    const req = buildRequest(
      'https://remote.example/',
      { method: 'GET', path: '/api/transfers/evm' },
      { address: '0xabc', limit: 5, tags: ['a', 'b'], filter: { x: 1 }, none: null },
    );
    expect(req).toEqual({
      method: 'GET',
      url: 'https://remote.example/api/transfers/evm?address=0xabc&limit=5&tags=a&tags=b&filter=%7B%22x%22%3A1%7D',
    });
  });

  it('sends a POST input as the JSON body, and fills :name path parameters from the input', () => {
    expect(buildRequest('https://remote.example', { method: 'POST', path: '/api/annuity' }, { payment: 1 })).toEqual({
      method: 'POST',
      url: 'https://remote.example/api/annuity',
      body: '{"payment":1}',
    });
    expect(
      buildRequest(
        'https://remote.example/base',
        { method: 'GET', path: '/v1/smm-order/:orderId' },
        { orderId: 'a b', verbose: true },
      ).url,
    ).toBe('https://remote.example/base/v1/smm-order/a%20b?verbose=true');
  });
});

describe('reading a challenge', () => {
  it('reads version 2 from PAYMENT-REQUIRED and version 1 from the body, keeping every field of each entry', () => {
    expect(readChallenge(encodePaymentRequiredHeader(challenge), {})).toEqual(challenge);
    const v1 = {
      x402Version: 1,
      accepts: [
        {
          scheme: 'exact',
          network: 'base',
          asset: '0x1',
          payTo: '0x2',
          maxAmountRequired: '5',
          outputSchema: { any: 'thing' },
        },
      ],
    };
    expect(readChallenge(null, v1)).toEqual(v1);
  });

  it('refuses what is not a challenge: no accepts, an entry without an amount, a non-numeric amount', () => {
    expect(readChallenge(null, {})).toBeUndefined();
    expect(
      readChallenge(null, { x402Version: 2, accepts: [{ scheme: 'exact', network: 'n', asset: 'a', payTo: 'p' }] }),
    ).toBeUndefined();
    expect(
      readChallenge(null, {
        x402Version: 2,
        accepts: [{ scheme: 'exact', network: 'n', asset: 'a', payTo: 'p', amount: '1.5' }],
      }),
    ).toBeUndefined();
  });
});

describe('sending a request to the remote', () => {
  it('reads a 200 with its JSON body and decoded receipt, and sends the payment in the header it names', async () => {
    const credential = {
      protocol: 'mpp' as const,
      header: 'Authorization',
      value: 'Payment c2lnbmVk',
      credential: {},
      from: '0x1111111111111111111111111111111111111111' as const,
      nonce: '0x00' as const,
    };
    const answer = await send(
      remotes,
      { url: `${base}/ok`, method: 'POST', body: '{"a":1}' },
      5_000,
      signal,
      credential,
    );
    expect(answer).toEqual({ type: 'ok', status: 200, body: { echo: '{"a":1}' }, receipt });
    expect(seen.at(-1)?.headers).toMatchObject({
      authorization: 'Payment c2lnbmVk',
      'content-type': 'application/json',
    });
  });

  it('reads 402 challenges (both versions), and an error with its Retry-After', async () => {
    expect(await send(remotes, { url: `${base}/paid`, method: 'GET' }, 5_000, signal)).toMatchObject({
      type: 'challenge',
      status: 402,
      challenge,
    });
    expect(await send(remotes, { url: `${base}/v1`, method: 'GET' }, 5_000, signal)).toMatchObject({
      type: 'challenge',
      challenge: { x402Version: 1 },
    });
    expect(await send(remotes, { url: `${base}/pending`, method: 'GET' }, 5_000, signal)).toEqual({
      type: 'error',
      status: 503,
      retryAfterSeconds: 10,
      body: { error: { code: 'settlement_pending', message: 'later', retryable: true } },
    });
    expect(await send(remotes, { url: `${base}/nowhere`, method: 'GET' }, 5_000, signal)).toEqual({
      type: 'error',
      status: 404,
      body: 'nothing here',
    });
  });

  it('reports no answer, without throwing, for a refused connection and for a remote that does not answer in time', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await send(remotes, { url: `http://127.0.0.1:${port}/x`, method: 'GET' }, 5_000, signal)).toMatchObject({
      type: 'no_answer',
      timedOut: false,
      message: 'ECONNREFUSED',
    });
    expect(await send(remotes, { url: `${base}/hang`, method: 'GET' }, 200, signal)).toEqual({
      type: 'no_answer',
      timedOut: true,
      message: 'no answer within 200 ms',
    });
  });
});
