import { readFileSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { paidTools } from '../../tools/index.js';
import { getFrom, headerBytes, probe, proxiedFleet, type HeldUpstream } from '../support/behind-proxy.js';
import { asMcpChallenge, connectHttpClient, postInitialize } from '../support/mcp.js';
import { describeWithNginx, startNginx, type RunningNginx } from '../support/nginx.js';
import { LOCAL_NETWORK, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { decodeHeader } from '../support/server.js';
import type { SpawnedServer } from '../support/spawn.js';

/** The site file operators copy, loaded as shipped (only its upstream servers and listen address replaced). */
const TEMPLATE = readFileSync(new URL('../../deploy/nginx/tollbooth.conf', import.meta.url), 'utf8');

describeWithNginx('Tollbooth behind nginx with deploy/nginx/tollbooth.conf', () => {
  // Two paying instances behind nginx, and a rate-limited one behind its own nginx (see ProxiedFleet).
  const fleet = proxiedFleet((upstreams) => startNginx(TEMPLATE, upstreams));
  let paid: PaidEnvironment;
  let instances: SpawnedServer[];
  let nginx: RunningNginx;
  let limitedNginx: RunningNginx;
  let held: HeldUpstream;
  beforeAll(async () => {
    await fleet.start();
    ({ paid, instances, proxy: nginx, limitedProxy: limitedNginx, held } = fleet);
  }, 120_000);
  afterAll(() => fleet.stop());

  it('passes on the 402 of every paid tool with its payment headers as the instance sent them', async () => {
    const [direct] = instances;
    let largest = 0;
    // Every tool's pair of answers is asked for at once; they are compared one tool after the other.
    const answers = await Promise.all(
      paidTools.map((tool) => Promise.all([probe(direct!.url, tool), probe(nginx.url, tool)])),
    );
    for (const [i, tool] of paidTools.entries()) {
      const [mine, proxied] = answers[i]!;
      expect([tool.name, proxied.status], nginx.errors()).toEqual([tool.name, 402]);
      expect(mine.status).toBe(402);
      largest = Math.max(largest, headerBytes(mine));
      for (const name of ['payment-required', 'www-authenticate'])
        expect(proxied.headers.has(name), `${tool.name} ${name}`).toBe(mine.headers.has(name));
      if (mine.headers.has('payment-required'))
        expect(decodeHeader(proxied.headers.get('payment-required'))).toEqual(
          decodeHeader(mine.headers.get('payment-required')),
        );
      // The MPP offers hold a fresh id and expiry per answer: the same offers, of the same size.
      expect(proxied.headers.get('www-authenticate')?.length).toBe(mine.headers.get('www-authenticate')?.length);
      expect(await proxied.json()).toEqual(await mine.json());
    }
    // These headers are what nginx's default one-page buffer cannot hold (502 "upstream sent too big header").
    expect(largest).toBeGreaterThan(8 * 1024);
    expect(nginx.errors()).not.toMatch(/too big header/);
  });

  it('carries a paid call with a real payment, settled on the chain, and its receipt header', async () => {
    const res402 = await fetch(`${nginx.url}/api/annuity`, { method: 'POST' });
    const challenge = decodeHeader(res402.headers.get('payment-required')) as PaymentRequired;
    const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK)!;
    const before = await paid.balance(paid.payTo);
    const res = await fetch(`${nginx.url}/api/annuity`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'payment-signature': encodePayment(await signExactPayment(paid.payers[0]!, entry)),
      },
      body: JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 }),
    });
    expect(res.status, nginx.errors()).toBe(200);
    expect(decodeHeader(res.headers.get('payment-response'))).toMatchObject({ success: true, network: LOCAL_NETWORK });
    expect(await paid.balance(paid.payTo)).toBe(before + BigInt(entry.amount));
  });

  it('serves MCP over streamable HTTP: sessions stay on their instance and answers arrive as server-sent events', async () => {
    const clients: Client[] = [];
    try {
      // Several sessions: with two instances, a session routed by anything but a stable key soon meets the wrong one.
      clients.push(...(await Promise.all([1, 2, 3].map(() => connectHttpClient(nginx.url)))));
      for (const client of clients) {
        expect((await client.listTools()).tools.map((t) => t.name)).toContain('annuity');
        const unpaid = await client.callTool({ name: 'geo-distance', arguments: {} });
        expect(unpaid.isError).toBe(true);
      }
      const direct = await probe(
        instances[0]!.url,
        paidTools.find((t) => t.name === 'annuity')!,
      );
      const expected = asMcpChallenge(
        decodeHeader(direct.headers.get('payment-required')) as PaymentRequired,
        'annuity',
      );
      const entry = expected.accepts.find((a) => a.network === LOCAL_NETWORK)!;
      const payment = await signExactPayment(paid.payers[0]!, entry);
      const result = await clients[0]!.callTool({
        name: 'annuity',
        arguments: { payment: 100, ratePerPeriod: 0.05, periods: 10 },
        _meta: { 'x402/payment': payment },
      });
      expect(result.isError ?? false, JSON.stringify(result)).toBe(false);
      expect(result._meta?.['x402/payment-response']).toMatchObject({ success: true });
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it('streams MCP progress notifications through at once, while the call is still running', async () => {
    const client = await connectHttpClient(nginx.url);
    try {
      const probe402 = await fetch(`${nginx.url}/api/skill/wallet-readiness`, { method: 'POST' });
      const challenge = decodeHeader(probe402.headers.get('payment-required')) as PaymentRequired;
      const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK)!;
      let firstProgress: (message?: string) => void = () => {};
      const progressed = new Promise<string | undefined>((resolve) => (firstProgress = resolve));
      const call = client.callTool(
        {
          name: 'wallet-readiness',
          arguments: { address: '0x000000000000000000000000000000000000dEaD' },
          _meta: { 'x402/payment': await signExactPayment(paid.payers[0]!, entry) },
        },
        undefined,
        { onprogress: (p) => firstProgress(p.message), timeout: 120_000 },
      );
      // The handler's first notification arrives while its upstreams still hold every step: nginx buffering the
      // event stream would hold it back until the answer ends, and the answer cannot end before the release.
      expect(await progressed).toMatch(/^running wallet-balances/);
      held.release();
      const result = await call;
      // Every upstream failed: the call fails and nothing is charged.
      expect(result.isError).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('answers an MCP POST as an event stream through nginx, not as a buffered JSON body', async () => {
    const res = await postInitialize(nginx.url, 'nginx-test');
    expect(res.status, nginx.errors()).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('mcp-session-id')).toMatch(/\S/);
    expect(await res.text()).toMatch(/^event: message\ndata: \{.*"serverInfo"/m);
  });

  it('is the address nginx saw, not nginx itself and not what the client claims in X-Forwarded-For', async () => {
    const healthz = `${limitedNginx.url}/healthz`;
    expect([await getFrom('127.0.0.5', healthz), await getFrom('127.0.0.5', healthz)]).toEqual([200, 200]);
    expect(await getFrom('127.0.0.5', healthz)).toBe(429);
    // Another client has its own bucket, although every request reaches Tollbooth from nginx's one address.
    expect(await getFrom('127.0.0.6', healthz, { 'x-forwarded-for': '198.51.100.1' })).toBe(200);
    // Claiming another address changes nothing: the entry nginx appends is the one counted.
    expect(await getFrom('127.0.0.6', healthz, { 'x-forwarded-for': '198.51.100.2' })).toBe(200);
    expect(await getFrom('127.0.0.6', healthz, { 'x-forwarded-for': '198.51.100.3' })).toBe(429);
  });
});
