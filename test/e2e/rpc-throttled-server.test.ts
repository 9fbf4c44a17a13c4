import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { callOutcome } from '../support/rpc-failures.js';
import { decodeHeader } from '../support/server.js';
import { spawnServe, spawnStdio, type SpawnedServer, type SpawnedStdio } from '../support/spawn.js';
import { rpcMethods, startFlakyRpc, type FlakyRpc } from '../support/upstreams/flaky-rpc.js';

// The built CLI (`npm run build` first) in a child process: an unhandled rejection there really ends the process.
let paid: PaidEnvironment;
let rpc: FlakyRpc;
let child: SpawnedServer | SpawnedStdio | undefined;
const body = { payment: 100, ratePerPeriod: 0.05, periods: 10 };

beforeAll(async () => {
  paid = await startPaidEnvironment(2);
  rpc = await startFlakyRpc(paid.chain.rpcUrl);
}, 120_000);
afterEach(async () => {
  rpc.heal();
  await child?.stop();
  child = undefined;
});
afterAll(async () => {
  await rpc?.stop();
  await paid?.stop();
});

/** The server's environment: the in-process EVM facilitator on the local chain, reached only through the flaky RPC. */
function environment(extra: Record<string, string> = {}): Record<string, string> {
  const [network] = (JSON.parse(paid.env.NETWORKS_JSON!) as { networks: Array<Record<string, unknown>> }).networks;
  return {
    ...paid.env,
    NETWORKS_JSON: JSON.stringify({ networks: [{ ...network, rpcUrl: rpc.url }] }),
    LOG_LEVEL: 'info',
    FACILITATOR_TIMEOUT_MS: '3000',
    FACILITATOR_SETTLE_TIMEOUT_MS: '5000',
    ...extra,
  };
}

const unhandledLogged = (stderr: string) => stderr.split('\n').filter((l) => l.includes('unhandled promise rejection'));

describe('tollbooth serve with the in-process EVM facilitator, its chain RPC answering 429', () => {
  it('answers the paid call 502 facilitator_unavailable, charges nothing, keeps running with no unhandled rejection, and takes the same payment once the RPC recovers', async () => {
    const server = await spawnServe(environment());
    child = server;
    const post = (payment: unknown) =>
      fetch(server.url + '/api/annuity', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
        body: JSON.stringify(body),
      });
    const challenge = decodeHeader(
      (await fetch(server.url + '/api/annuity', { method: 'POST' })).headers.get('payment-required'),
    ) as PaymentRequired;
    const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK) as PaymentRequirements;
    const payer = paid.payers[0]!;
    const before = await paid.balance(payer.address);
    const payment = await signExactPayment(payer, entry);

    rpc.fail('429');
    // Several calls, each abandoning the library's asset check on the first visit (the crash path), then more requests.
    for (let i = 0; i < 3; i++)
      expect(await callOutcome(await post(payment))).toEqual({
        status: 502,
        code: 'facilitator_unavailable',
        delivered: false,
      });
    expect(await callOutcome(await post(await signExactPayment(payer, entry)))).toEqual({
      status: 502,
      code: 'facilitator_unavailable',
      delivered: false,
    });
    expect((await fetch(server.url + '/healthz')).status).toBe(200);
    expect(server.child.exitCode).toBeNull();
    expect(await paid.balance(payer.address)).toBe(before);

    rpc.heal();
    expect(await callOutcome(await post(payment))).toMatchObject({ status: 200, delivered: true });
    expect(await callOutcome(await post(payment))).toEqual({
      status: 402,
      code: 'payment_already_used',
      delivered: false,
    });
    expect(await paid.balance(payer.address)).toBe(before - 1000n);

    // Throttled again while settling (the asset is known by now): the output is withheld, nothing is charged.
    const late = await signExactPayment(payer, entry);
    rpc.fail('429', rpcMethods('eth_getTransactionCount', 'eth_estimateGas', 'eth_sendRawTransaction'));
    expect(await callOutcome(await post(late))).toEqual({
      status: 402,
      code: 'facilitator_unavailable',
      delivered: false,
    });
    expect(await paid.balance(payer.address)).toBe(before - 1000n);

    const metrics = await (await fetch(server.url + '/metrics')).text();
    expect(metrics).toMatch(/^tollbooth_unhandled_rejections_total 0$/m);
    expect(unhandledLogged(server.stderr())).toEqual([]);
    expect(server.child.exitCode).toBeNull();
  });
});

describe('tollbooth stdio with the in-process EVM facilitator, its chain RPC answering 429', () => {
  it('answers the paid MCP call with an error result, charges nothing and keeps serving the session', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-stdio-rpc-'));
    try {
      const stdio = await spawnStdio({ ...environment(), DATA_DIR: dataDir });
      child = stdio;
      const unpaid = await stdio.client.callTool({ name: 'annuity', arguments: body });
      const challenge = unpaid.structuredContent as unknown as PaymentRequired;
      const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK) as PaymentRequirements;
      const payer = paid.payers[1]!;
      const before = await paid.balance(payer.address);
      rpc.fail('429');
      for (let i = 0; i < 3; i++) {
        const result = await stdio.client.callTool({
          name: 'annuity',
          arguments: body,
          _meta: { 'x402/payment': await signExactPayment(payer, entry) },
        });
        expect(result.isError).toBe(true);
        expect(JSON.stringify(result.content)).toContain('facilitator_unavailable');
      }
      expect((await stdio.client.listTools()).tools.length).toBeGreaterThan(0);
      expect(stdio.child.exitCode).toBeNull();
      expect(await paid.balance(payer.address)).toBe(before);
      expect(unhandledLogged(stdio.stderr())).toEqual([]);
    } finally {
      await child?.stop();
      child = undefined;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
