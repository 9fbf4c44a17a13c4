import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { paidTools } from '../../tools/index.js';
import { getFrom, headerBytes, probe, proxiedFleet, type ProxiedFleet, type StartedProxy } from './behind-proxy.js';
import { asMcpChallenge, connectHttpClient, postInitialize } from './mcp.js';
import { LOCAL_NETWORK } from './paid.js';
import { encodePayment, signExactPayment } from './payer.js';
import { decodeHeader } from './server.js';

/** The parameters of an MPP offer that are new in every answer. */
const FRESH = /\b(id|expires|opaque)="[^"]*"/g;

/** A reverse proxy put in front of Tollbooth by a shipped configuration (deploy/). */
export interface ProxyUnderTest<P extends StartedProxy> {
  /** Its name in the tests' sentences ("nginx", "caddy"). */
  name: string;
  /** Starts it in front of `upstreams` with the shipped configuration. */
  start(upstreams: readonly string[]): Promise<P>;
  /** What its error log must not say after the 402s passed (nginx: "too big header"). */
  refusedHeaders?: RegExp;
  /** Tests of this proxy alone, on the same fleet. */
  more?(fleet: ProxiedFleet<P>): void;
}

/**
 * The tests every shipped proxy configuration passes, registered in the caller's describe block: each paid tool's
 * 402 with its payment headers intact, a paid call settled on the chain, MCP sessions and server-sent events, and the
 * client address with TRUST_PROXY=1. Two paying instances behind the proxy, and a rate-limited one behind its own.
 */
export function behindProxySuite<P extends StartedProxy>(under: ProxyUnderTest<P>): void {
  const fleet = proxiedFleet(under.start);
  beforeAll(() => fleet.start(), 120_000);
  afterAll(() => fleet.stop());
  for (const tests of [
    passesEvery402,
    carriesAPaidCall,
    keepsMcpSessions,
    streamsMcpProgress,
    answersMcpAsEventStream,
    countsTheClientAddress,
  ])
    tests(under, fleet);
  under.more?.(fleet);
}

function passesEvery402<P extends StartedProxy>({ refusedHeaders }: ProxyUnderTest<P>, fleet: ProxiedFleet<P>): void {
  it('passes on the 402 of every paid tool with its payment headers as the instance sent them', async () => {
    const { proxy } = fleet;
    const [direct] = fleet.instances;
    let largest = 0;
    // Every tool's pair of answers is asked for at once; they are compared one tool after the other.
    const answers = await Promise.all(
      paidTools.map((tool) => Promise.all([probe(direct!.url, tool), probe(proxy.url, tool)])),
    );
    for (const [i, tool] of paidTools.entries()) {
      const [mine, proxied] = answers[i]!;
      expect([tool.name, proxied.status], proxy.errors()).toEqual([tool.name, 402]);
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
    // Larger than one memory page: what nginx's default proxy buffer cannot hold (502 "upstream sent too big header").
    expect(largest).toBeGreaterThan(8 * 1024);
    if (refusedHeaders) expect(proxy.errors()).not.toMatch(refusedHeaders);
  });
}

function carriesAPaidCall<P extends StartedProxy>(_under: ProxyUnderTest<P>, fleet: ProxiedFleet<P>): void {
  it('carries a paid call with a real payment, settled on the chain, and its receipt header', async () => {
    const { proxy } = fleet;
    const res402 = await fetch(`${proxy.url}/api/annuity`, { method: 'POST' });
    const challenge = decodeHeader(res402.headers.get('payment-required')) as PaymentRequired;
    const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK)!;
    const before = await fleet.paid.balance(fleet.paid.payTo);
    const res = await fetch(`${proxy.url}/api/annuity`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'payment-signature': encodePayment(await signExactPayment(fleet.paid.payers[0]!, entry)),
      },
      body: JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 }),
    });
    expect(res.status, proxy.errors()).toBe(200);
    expect(decodeHeader(res.headers.get('payment-response'))).toMatchObject({ success: true, network: LOCAL_NETWORK });
    expect(await fleet.paid.balance(fleet.paid.payTo)).toBe(before + BigInt(entry.amount));
  });
}

function keepsMcpSessions<P extends StartedProxy>(_under: ProxyUnderTest<P>, fleet: ProxiedFleet<P>): void {
  it('serves MCP over streamable HTTP: sessions stay on their instance and answers arrive as server-sent events', async () => {
    const { proxy } = fleet;
    const clients: Client[] = [];
    try {
      // Several sessions: with two instances, a session routed by anything but a stable key soon meets the wrong one.
      clients.push(...(await Promise.all([1, 2, 3].map(() => connectHttpClient(proxy.url)))));
      for (const client of clients) {
        expect((await client.listTools()).tools.map((t) => t.name)).toContain('annuity');
        const unpaid = await client.callTool({ name: 'geo-distance', arguments: {} });
        expect(unpaid.isError).toBe(true);
      }
      const direct = await probe(
        fleet.instances[0]!.url,
        paidTools.find((t) => t.name === 'annuity')!,
      );
      const expected = asMcpChallenge(
        decodeHeader(direct.headers.get('payment-required')) as PaymentRequired,
        'annuity',
      );
      const entry = expected.accepts.find((a) => a.network === LOCAL_NETWORK)!;
      const payment = await signExactPayment(fleet.paid.payers[0]!, entry);
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
}

function streamsMcpProgress<P extends StartedProxy>(_under: ProxyUnderTest<P>, fleet: ProxiedFleet<P>): void {
  it('streams MCP progress notifications through at once, while the call is still running', async () => {
    const { proxy } = fleet;
    const client = await connectHttpClient(proxy.url);
    try {
      const probe402 = await fetch(`${proxy.url}/api/skill/wallet-readiness`, { method: 'POST' });
      const challenge = decodeHeader(probe402.headers.get('payment-required')) as PaymentRequired;
      const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK)!;
      let firstProgress: (message?: string) => void = () => {};
      const progressed = new Promise<string | undefined>((resolve) => (firstProgress = resolve));
      const call = client.callTool(
        {
          name: 'wallet-readiness',
          arguments: { address: '0x000000000000000000000000000000000000dEaD' },
          _meta: { 'x402/payment': await signExactPayment(fleet.paid.payers[0]!, entry) },
        },
        undefined,
        { onprogress: (p) => firstProgress(p.message), timeout: 120_000 },
      );
      // The handler's first notification arrives while its upstreams still hold every step: a proxy buffering the
      // event stream would hold it back until the answer ends, and the answer cannot end before the release.
      expect(await progressed).toMatch(/^running wallet-balances/);
      fleet.held.release();
      const result = await call;
      // Every upstream failed: the call fails and nothing is charged.
      expect(result.isError).toBe(true);
    } finally {
      await client.close();
    }
  });
}

function answersMcpAsEventStream<P extends StartedProxy>({ name }: ProxyUnderTest<P>, fleet: ProxiedFleet<P>): void {
  it(`answers an MCP POST as an event stream through ${name}, not as a buffered JSON body`, async () => {
    const { proxy } = fleet;
    const res = await postInitialize(proxy.url, `${name}-test`);
    expect(res.status, proxy.errors()).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('mcp-session-id')).toMatch(/\S/);
    expect(await res.text()).toMatch(/^event: message\ndata: \{.*"serverInfo"/m);
  });
}

function countsTheClientAddress<P extends StartedProxy>({ name }: ProxyUnderTest<P>, fleet: ProxiedFleet<P>): void {
  it(`is the address ${name} saw, not ${name} itself and not what the client claims in X-Forwarded-For`, async () => {
    const { limitedProxy } = fleet;
    const healthz = `${limitedProxy.url}/healthz`;
    expect([await getFrom('127.0.0.5', healthz), await getFrom('127.0.0.5', healthz)]).toEqual([200, 200]);
    expect(await getFrom('127.0.0.5', healthz)).toBe(429);
    // Another client has its own bucket, although every request reaches Tollbooth from the proxy's one address.
    expect(await getFrom('127.0.0.6', healthz, { 'x-forwarded-for': '198.51.100.1' })).toBe(200);
    // Claiming another address changes nothing: the address the proxy saw is the one counted (appended to the
    // header by nginx, put in place of it by Caddy).
    expect(await getFrom('127.0.0.6', healthz, { 'x-forwarded-for': '198.51.100.2' })).toBe(200);
    expect(await getFrom('127.0.0.6', healthz, { 'x-forwarded-for': '198.51.100.3' })).toBe(429);
  });
}
