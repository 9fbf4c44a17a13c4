import { readFileSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { paidTools } from '../../tools/index.js';
import { getFrom, headerBytes, probe, proxiedFleet, type HeldUpstream } from '../support/behind-proxy.js';
import { describeWithCaddy, startCaddy, type RunningCaddy } from '../support/caddy.js';
import { asMcpChallenge, connectHttpClient, postInitialize } from '../support/mcp.js';
import { LOCAL_NETWORK, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { decodeHeader } from '../support/server.js';
import type { SpawnedServer } from '../support/spawn.js';

/** The Caddyfile operators copy, loaded as shipped (only its site address and upstream addresses replaced). */
const TEMPLATE = readFileSync(new URL('../../deploy/caddy/Caddyfile', import.meta.url), 'utf8');
/** The parameters of an MPP offer that are new in every answer. */
const FRESH = /\b(id|expires|opaque)="[^"]*"/g;

describeWithCaddy('Tollbooth behind Caddy with deploy/caddy/Caddyfile', () => {
  // Two paying instances behind caddy, and a rate-limited one behind its own caddy (see ProxiedFleet).
  const fleet = proxiedFleet((upstreams) => startCaddy(TEMPLATE, upstreams));
  let paid: PaidEnvironment;
  let instances: SpawnedServer[];
  let caddy: RunningCaddy;
  let limitedCaddy: RunningCaddy;
  let held: HeldUpstream;
  beforeAll(async () => {
    await fleet.start();
    ({ paid, instances, proxy: caddy, limitedProxy: limitedCaddy, held } = fleet);
  }, 120_000);
  afterAll(() => fleet.stop());

  it('passes on the 402 of every paid tool with its payment headers as the instance sent them', async () => {
    const [direct] = instances;
    let largest = 0;
    // Every tool's pair of answers is asked for at once; they are compared one tool after the other.
    const answers = await Promise.all(
      paidTools.map((tool) => Promise.all([probe(direct!.url, tool), probe(caddy.url, tool)])),
    );
    for (const [i, tool] of paidTools.entries()) {
      const [mine, proxied] = answers[i]!;
      expect([tool.name, proxied.status], caddy.errors()).toEqual([tool.name, 402]);
      expect(mine.status).toBe(402);
      largest = Math.max(largest, headerBytes(mine));
      for (const name of ['payment-required', 'www-authenticate'])
        expect(proxied.headers.has(name), `${tool.name} ${name}`).toBe(mine.headers.has(name));
      expect(proxied.headers.get('payment-required'), tool.name).toBe(mine.headers.get('payment-required'));
      // The MPP offers hold a fresh id, expiry and salt per answer: byte for byte the same offers but for those.
      const offers = (res: Response) => res.headers.get('www-authenticate')?.replace(FRESH, '$1=""');
      expect(offers(proxied), tool.name).toBe(offers(mine));
      expect(proxied.headers.get('www-authenticate')?.length).toBe(mine.headers.get('www-authenticate')?.length);
      expect(await proxied.json()).toEqual(await mine.json());
    }
    // Large headers (Go's proxy reads up to 10 MB of them), passed on whole.
    expect(largest).toBeGreaterThan(8 * 1024);
  });

  it('carries a paid call with a real payment, settled on the chain, and its receipt header', async () => {
    const res402 = await fetch(`${caddy.url}/api/annuity`, { method: 'POST' });
    const challenge = decodeHeader(res402.headers.get('payment-required')) as PaymentRequired;
    const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK)!;
    const before = await paid.balance(paid.payTo);
    const res = await fetch(`${caddy.url}/api/annuity`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'payment-signature': encodePayment(await signExactPayment(paid.payers[0]!, entry)),
      },
      body: JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 }),
    });
    expect(res.status, caddy.errors()).toBe(200);
    expect(decodeHeader(res.headers.get('payment-response'))).toMatchObject({ success: true, network: LOCAL_NETWORK });
    expect(await paid.balance(paid.payTo)).toBe(before + BigInt(entry.amount));
  });

  it('serves MCP over streamable HTTP: sessions stay on their instance and answers arrive as server-sent events', async () => {
    const clients: Client[] = [];
    try {
      // Several sessions: with two instances, a session routed by anything but a stable key soon meets the wrong one.
      clients.push(...(await Promise.all([1, 2, 3].map(() => connectHttpClient(caddy.url)))));
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
    const client = await connectHttpClient(caddy.url);
    try {
      const probe402 = await fetch(`${caddy.url}/api/skill/wallet-readiness`, { method: 'POST' });
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
      // The handler's first notification arrives while its upstreams still hold every step: caddy buffering the
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

  it('answers an MCP POST as an event stream through caddy, not as a buffered JSON body', async () => {
    const res = await postInitialize(caddy.url, 'caddy-test');
    expect(res.status, caddy.errors()).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('mcp-session-id')).toMatch(/\S/);
    expect(await res.text()).toMatch(/^event: message\ndata: \{.*"serverInfo"/m);
  });

  it('leaves the body limit to Tollbooth: 1 MiB on /mcp passes, one byte more gets its JSON 413 (not a 502)', async () => {
    const post = (base: string, bytes: number) =>
      fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'x'.repeat(bytes - 60)}"}}`.padEnd(bytes),
      });
    for (const bytes of [1024 * 1024, 1024 * 1024 + 1]) {
      const [mine, proxied] = await Promise.all([post(instances[0]!.url, bytes), post(caddy.url, bytes)]);
      expect([bytes, proxied.status], caddy.errors()).toEqual([bytes, mine.status]);
      expect(await proxied.json()).toEqual(await mine.json());
    }
    expect((await post(caddy.url, 1024 * 1024 + 1)).status).toBe(413);
  });

  it('is the address caddy saw, not caddy itself and not what the client claims in X-Forwarded-For', async () => {
    const healthz = `${limitedCaddy.url}/healthz`;
    expect([await getFrom('127.0.0.5', healthz), await getFrom('127.0.0.5', healthz)]).toEqual([200, 200]);
    expect(await getFrom('127.0.0.5', healthz)).toBe(429);
    // Another client has its own bucket, although every request reaches Tollbooth from caddy's one address.
    expect(await getFrom('127.0.0.6', healthz, { 'x-forwarded-for': '198.51.100.1' })).toBe(200);
    // Claiming another address changes nothing: caddy replaces the client's X-Forwarded-For with the address it saw.
    expect(await getFrom('127.0.0.6', healthz, { 'x-forwarded-for': '198.51.100.2' })).toBe(200);
    expect(await getFrom('127.0.0.6', healthz, { 'x-forwarded-for': '198.51.100.3' })).toBe(429);
  });
});
