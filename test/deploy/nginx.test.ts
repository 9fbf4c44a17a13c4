import { createServer, request, type Server } from 'node:http';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { paidTools } from '../../tools/index.js';
import { asMcpChallenge, connectHttpClient, postInitialize } from '../support/mcp.js';
import { describeWithNginx, startNginx, type RunningNginx } from '../support/nginx.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { decodeHeader } from '../support/server.js';
import { spawnServe, type SpawnedServer } from '../support/spawn.js';

/** The site file operators copy, loaded as shipped (only its upstream servers and listen address replaced). */
const TEMPLATE = readFileSync(new URL('../../deploy/nginx/tollbooth.conf', import.meta.url), 'utf8');
/** As docs/deploy.md says for one nginx in front: believe the one X-Forwarded-For entry it appends. */
const BEHIND_ONE_PROXY = { TRUST_PROXY: '1' };

/** The unpaid answer of a paid tool: the route's method and path, no body, no payment. */
const probe = (base: string, tool: (typeof paidTools)[number]) => fetch(base + tool.path, { method: tool.method });

/** Bytes of all response headers as they go over the wire (name, ": ", value, CRLF). */
function headerBytes(res: Response): number {
  let total = 0;
  for (const [name, value] of res.headers) total += name.length + value.length + 4;
  return total;
}

/** A GET sent from a chosen local address (all of 127.0.0.0/8 is loopback), so nginx sees that client address. */
function getFrom(localAddress: string, url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { localAddress, headers, agent: false }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode!));
    });
    req.once('error', reject);
    req.end();
  });
}

/** An upstream that holds every request until released, then fails it: keeps a tool's handler running on demand. */
async function startHeldUpstream(): Promise<{ url: string; release(): void; close(): Promise<void> }> {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const server: Server = createServer((req, res) => {
    req.resume();
    void released.then(() => res.writeHead(503).end());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    release,
    close: async () => {
      release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describeWithNginx('Tollbooth behind nginx with deploy/nginx/tollbooth.conf', () => {
  let paid: PaidEnvironment;
  let instances: SpawnedServer[] = [];
  let nginx: RunningNginx;
  // A third instance behind its own nginx, allowing two requests per client address and then 429 for a long while:
  // which requests share a bucket tells which client address the server counted.
  let limited: SpawnedServer;
  let limitedNginx: RunningNginx;
  // Every chain RPC and the onramp API of the wallet tools: wallet-readiness runs until the test lets it finish.
  let held: Awaited<ReturnType<typeof startHeldUpstream>>;
  beforeAll(async () => {
    held = await startHeldUpstream();
    const heldChains = Object.fromEntries(
      ['base', 'base-sepolia', 'solana', 'solana-devnet'].map((c) => [c, held.url]),
    );
    const wallets = {
      RPC_URLS: JSON.stringify(heldChains),
      CDP_API_URL: held.url,
      WALLET_STEP_TIMEOUT_MS: '600000',
      UPSTREAM_TIMEOUT_MS: '600000',
      UPSTREAM_RETRIES: '0',
      WALLET_READINESS_NETWORKS: 'eip155:8453',
    };
    // The chain, then the two paying instances and their nginx; beside them the limited instance and its nginx.
    const paying = async () => {
      paid = await startPaidEnvironment(1);
      instances = await Promise.all([1, 2].map(() => spawnServe({ ...paid.env, ...wallets, ...BEHIND_ONE_PROXY })));
      nginx = await startNginx(
        TEMPLATE,
        instances.map((i) => new URL(i.url).host),
      );
    };
    const limiting = async () => {
      limited = await spawnServe({ ...BEHIND_ONE_PROXY, RATE_LIMIT_IP_BURST: '2', RATE_LIMIT_IP_PER_MINUTE: '0.1' });
      limitedNginx = await startNginx(TEMPLATE, [new URL(limited.url).host]);
    };
    await Promise.all([paying(), limiting()]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([nginx?.stop(), limitedNginx?.stop()]);
    await Promise.all([...instances, limited].map((i) => i?.stop()));
    await Promise.all([paid?.stop(), held?.close()]);
  });

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
