import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { checkReadiness, type Readiness } from '../../src/observe/health.js';
import { PAY_TO_ENV } from '../support/pay-to.js';
import { startTestServer, type TestServer } from '../support/server.js';

const EVM_KEY = `0x${'11'.repeat(32)}`;
const servers: TestServer[] = [];
const facilitators: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const f of facilitators.splice(0)) {
    f.closeAllConnections();
    await new Promise((resolve) => f.close(resolve));
  }
});

/** Starts a server with real pay-to addresses (a placeholder one would be dropped once a facilitator can settle it). */
async function start(env: Record<string, string>): Promise<TestServer> {
  const server = await startTestServer({ ...PAY_TO_ENV, ...env });
  servers.push(server);
  return server;
}

/** A remote facilitator whose GET /supported answers (counted) or never answers. */
async function startFacilitator(mode: 'answers' | 'hangs'): Promise<{ url: string; supported: () => number }> {
  let supported = 0;
  const server = createServer((req, res) => {
    if (req.url !== '/supported') return void res.writeHead(404).end();
    supported += 1;
    if (mode === 'hangs') return;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        kinds: [
          { x402Version: 2, scheme: 'exact', network: 'eip155:8453' },
          { x402Version: 2, scheme: 'exact', network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp' },
        ],
        extensions: [],
        signers: {},
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  facilitators.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, supported: () => supported };
}

/** A URL on which nothing listens (connection refused). */
async function closedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

async function readyz(server: TestServer): Promise<{ status: number; body: Readiness }> {
  const res = await fetch(server.url + '/readyz');
  expect(res.headers.get('cache-control')).toBe('no-store');
  return { status: res.status, body: (await res.json()) as Readiness };
}

describe('GET /healthz', () => {
  it('says the process is alive, with its version, development pay-to families and facilitator modes', async () => {
    const server = await start({
      FACILITATOR_EVM_PRIVATE_KEY: EVM_KEY,
      PAY_TO_SOLANA: '',
      PAY_TO_STELLAR: '',
      PAY_TO_ALGORAND: '',
    });
    const res = await fetch(server.url + '/healthz');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      status: 'ok',
      version: expect.any(String),
      devPayTo: ['svm', 'stellar', 'algorand'],
      facilitator: 'in-process',
      facilitators: { evm: 'in-process', svm: 'none', stellar: 'none', algorand: 'none' },
    });
  });
});

describe('GET /readyz', () => {
  it('is 200 when the store answers and the in-process facilitator lists what it supports', async () => {
    const { status, body } = await readyz(await start({ FACILITATOR_EVM_PRIVATE_KEY: EVM_KEY }));
    expect(status).toBe(200);
    expect(body.status).toBe('ready');
    expect(body.checks.store).toMatchObject({ ok: true, ms: expect.any(Number), probe: 'write' });
    expect(body.checks['facilitator:evm']).toMatchObject({ ok: true, mode: 'in-process' });
    expect(body.checks['facilitator:evm']!.kinds).toBeGreaterThan(0);
    expect(Object.keys(body.checks).sort()).toEqual(['facilitator:evm', 'store']);
  });

  it('asks a remote facilitator shared by every family once, and reports it under each family', async () => {
    const remote = await startFacilitator('answers');
    const server = await start({ FACILITATOR_URL: remote.url });
    const askedAtStart = remote.supported();
    const { status, body } = await readyz(server);
    expect(status).toBe(200);
    for (const family of ['evm', 'svm', 'stellar', 'algorand']) {
      expect(body.checks[`facilitator:${family}`]).toMatchObject({
        ok: true,
        mode: 'remote',
        kinds: 2,
        facilitator: remote.url,
      });
    }
    expect(remote.supported() - askedAtStart).toBe(1);
    expect(body.cannotSettle).toBeUndefined();
  });

  it('is 503 naming the facilitator check when the remote facilitator cannot be reached', async () => {
    const remote = await startFacilitator('answers');
    const { status, body } = await readyz(
      await start({ FACILITATOR_URL_EVM: await closedUrl(), FACILITATOR_URL_SOLANA: remote.url }),
    );
    expect(status).toBe(503);
    expect(body.status).toBe('not_ready');
    expect(body.checks['facilitator:evm']).toMatchObject({ ok: false, mode: 'remote', error: expect.any(String) });
    expect(body.checks['facilitator:svm']).toMatchObject({ ok: true });
    expect(body.checks.store).toMatchObject({ ok: true });
  });

  it('names the advertised families no facilitator or settlement key serves, and is not ready with them in production', async () => {
    const server = await start({ FACILITATOR_EVM_PRIVATE_KEY: EVM_KEY });
    const { status, body } = await readyz(server);
    expect(status).toBe(200);
    expect(body.cannotSettle).toEqual({ families: ['svm', 'stellar', 'algorand'], reason: expect.any(String) });
    // A production configuration never gets this far (its start is refused); were it to, it would not be ready.
    const { store, facilitator, config } = server.runtime;
    const production = await checkReadiness(store, facilitator, 3_000, { ...config, production: true });
    expect(production.status).toBe('not_ready');
    expect(production.cannotSettle?.families).toEqual(['svm', 'stellar', 'algorand']);
  });

  it('is 503 when the store does not answer', async () => {
    const server = await start({});
    await server.runtime.store.close();
    const { status, body } = await readyz(server);
    expect(status).toBe(503);
    expect(body.checks.store).toMatchObject({ ok: false, error: expect.any(String) });
  });
});

describe('checkReadiness', () => {
  it('fails a facilitator that does not answer within the time limit', async () => {
    const remote = await startFacilitator('hangs');
    // The start-up comparison with /supported gives up after FACILITATOR_TIMEOUT_MS (the options stay advertised).
    const server = await start({ FACILITATOR_URL: remote.url, FACILITATOR_TIMEOUT_MS: '200' });
    const readiness = await checkReadiness(server.runtime.store, server.runtime.facilitator, 200);
    expect(readiness.status).toBe('not_ready');
    expect(readiness.checks['facilitator:evm']).toMatchObject({
      ok: false,
      error: 'the facilitator did not answer within 200 ms',
    });
    expect(readiness.checks.store).toMatchObject({ ok: true });
  });
});
