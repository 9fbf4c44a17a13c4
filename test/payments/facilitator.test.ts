import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyToolDefinition } from '../../src/tool.js';
import { annuity } from '../../tools/annuity.js';
import { startLookalikeFacilitator, type LookalikeFacilitator } from '../support/facilitator.js';
import { connectHttpClient } from '../support/mcp.js';
import { countingTools, LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';

/** How long Tollbooth waits for the remote facilitator in these tests. */
const TIMEOUT_MS = 1500;
const args = { payment: 100, ratePerPeriod: 0.05, periods: 10 };
const body = JSON.stringify(args);

let paid: PaidEnvironment;

beforeAll(async () => {
  paid = await startPaidEnvironment(7);
}, 120_000);
afterAll(async () => {
  await paid?.stop();
});

/** A look-alike facilitator and a Tollbooth in remote mode pointing at it, with counted tool runs. */
interface RemoteStack {
  facilitator: LookalikeFacilitator;
  server: TestServer;
  runs: Map<string, number>;
  close(): Promise<void>;
}

async function startRemoteStack(): Promise<RemoteStack> {
  // The settlement key moves from Tollbooth to the facilitator: Tollbooth must not be able to settle by itself.
  const { FACILITATOR_EVM_PRIVATE_KEY: key, ...serverEnv } = paid.env;
  if (!key) throw new Error('the paid environment has no facilitator key');
  const facilitator = await startLookalikeFacilitator({ rpcUrl: paid.chain.rpcUrl, chainId: paid.chain.chainId, privateKey: key as Hex, network: LOCAL_NETWORK });
  const counted = countingTools([annuity] as AnyToolDefinition[]);
  const server = await startTestServer(
    { ...serverEnv, FACILITATOR_URL: facilitator.url, FACILITATOR_TIMEOUT_MS: String(TIMEOUT_MS), FACILITATOR_SETTLE_TIMEOUT_MS: String(TIMEOUT_MS), FACILITATOR_EVM_ADDRESS: facilitator.address },
    { tools: counted.tools },
  );
  return {
    facilitator,
    server,
    runs: counted.runs,
    close: async () => {
      await server.close();
      await facilitator.close();
    },
  };
}

async function localEntry(server: TestServer): Promise<PaymentRequirements> {
  const res = await fetch(server.url + '/api/annuity', { method: 'POST' });
  const challenge = decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
  const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK);
  if (!entry) throw new Error('the local network is not advertised');
  return entry;
}

function pay(server: TestServer, payment: PaymentPayload): Promise<Response> {
  return fetch(server.url + '/api/annuity', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body,
  });
}

/** The reason a refusal gives: `error.code` on 4xx/5xx error bodies, `error` on 402 challenges. */
function reasonOf(refusal: { error?: string | { code?: string } }): string | undefined {
  return typeof refusal.error === 'string' ? refusal.error : refusal.error?.code;
}

describe('a paid call through a remote facilitator', () => {
  let stack: RemoteStack;
  beforeAll(async () => {
    stack = await startRemoteStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('runs in remote mode: the server holds no settlement key of its own', async () => {
    const health = (await (await fetch(stack.server.url + '/healthz')).json()) as { facilitator: string };
    expect(health.facilitator).toBe('remote');
  });

  it('settles on the chain: 200, a receipt with the transaction, exactly the price moved, one verify and one settle', async () => {
    const payer = paid.payers[0]!;
    const before = { payer: await paid.balance(payer.address), payTo: await paid.balance(paid.payTo) };
    const res = await pay(stack.server, await signExactPayment(payer, await localEntry(stack.server)));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { presentValue: number }).presentValue).toBeCloseTo(772.1734929, 5);
    const receipt = decodeHeader(res.headers.get('payment-response')) as { success: boolean; transaction: string; network: string; payer: string };
    expect(receipt).toMatchObject({ success: true, network: LOCAL_NETWORK, payer: payer.address });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await paid.balance(payer.address)).toBe(before.payer - 1000n);
    expect(await paid.balance(paid.payTo)).toBe(before.payTo + 1000n);
    expect(stack.facilitator.calls).toMatchObject({ verify: 1, settle: 1 });
    expect(stack.runs.get('annuity')).toBe(1);
    const [stored] = await stack.server.runtime.store.listReceipts({ limit: 1 });
    expect(stored).toMatchObject({ tool: 'annuity', status: 'settled', transaction: receipt.transaction, transport: 'http' });
  });
});

describe('a facilitator that hangs on verify', () => {
  let stack: RemoteStack;
  beforeAll(async () => {
    stack = await startRemoteStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('is cut off by the timeout with 502 facilitator_unavailable, the tool never runs and nothing moves on chain; the same payment then succeeds', async () => {
    const payer = paid.payers[1]!;
    const payment = await signExactPayment(payer, await localEntry(stack.server));
    const before = { payer: await paid.balance(payer.address), payTo: await paid.balance(paid.payTo) };

    stack.facilitator.setMode({ verify: 'hang' });
    const started = Date.now();
    const res = await pay(stack.server, payment);
    const elapsed = Date.now() - started;
    expect(res.status).toBe(502);
    expect(res.headers.get('payment-response')).toBeNull();
    const refusal = (await res.json()) as { error: { code: string; message: string; retryable: boolean } };
    expect(refusal.error.code).toBe('facilitator_unavailable');
    expect(refusal.error.retryable).toBe(true);
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
    expect(elapsed).toBeLessThan(TIMEOUT_MS + 3000);
    expect(stack.runs.get('annuity') ?? 0).toBe(0);
    expect(stack.facilitator.calls).toMatchObject({ verify: 1, settle: 0 });
    expect(await paid.balance(payer.address)).toBe(before.payer);
    expect(await paid.balance(paid.payTo)).toBe(before.payTo);

    // The claim was released: the very same authorization buys the call once the facilitator is back.
    stack.facilitator.setMode({ verify: 'ok' });
    const retried = await pay(stack.server, payment);
    expect(retried.status).toBe(200);
    expect((decodeHeader(retried.headers.get('payment-response')) as { success: boolean }).success).toBe(true);
    expect(stack.runs.get('annuity')).toBe(1);
    expect(await paid.balance(payer.address)).toBe(before.payer - 1000n);
    expect(await paid.balance(paid.payTo)).toBe(before.payTo + 1000n);
  });
});

describe('a facilitator that answers verify with nonsense', () => {
  let stack: RemoteStack;
  beforeAll(async () => {
    stack = await startRemoteStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  const cases: Array<['garbage' | 'http500', string, number]> = [
    ['garbage', 'a 200 whose body is not JSON', 2],
    ['http500', 'an HTTP 500', 3],
  ];
  for (const [mode, label, payerIndex] of cases) {
    it(`answering ${label} gets a clear refusal with a reason, never a crash and never a tool run; the payment stays usable`, async () => {
      const payer = paid.payers[payerIndex]!;
      const payment = await signExactPayment(payer, await localEntry(stack.server));
      const balance = await paid.balance(payer.address);
      const runsBefore = stack.runs.get('annuity') ?? 0;
      const settlesBefore = stack.facilitator.calls.settle;

      stack.facilitator.setMode({ verify: mode });
      const res = await pay(stack.server, payment);
      expect(res.status).toBe(502);
      const refusal = (await res.json()) as { error?: string | { code?: string }; message?: string };
      expect(reasonOf(refusal)).toBe('facilitator_unavailable');
      expect(stack.runs.get('annuity') ?? 0).toBe(runsBefore);
      expect(stack.facilitator.calls.settle).toBe(settlesBefore);
      expect(await paid.balance(payer.address)).toBe(balance);

      // Nothing was kept: the same authorization works once the facilitator is healthy again.
      stack.facilitator.setMode({ verify: 'ok' });
      const retried = await pay(stack.server, payment);
      expect(retried.status).toBe(200);
      expect(stack.runs.get('annuity')).toBe(runsBefore + 1);
      expect(await paid.balance(payer.address)).toBe(balance - 1000n);
    });
  }
});

describe('a facilitator that hangs on settle', () => {
  let stack: RemoteStack;
  beforeAll(async () => {
    stack = await startRemoteStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('gets a 402 with a failed receipt, the output withheld, a failed receipt stored, and the payment never buys a second run', async () => {
    const payer = paid.payers[4]!;
    const payment = await signExactPayment(payer, await localEntry(stack.server));
    const before = { payer: await paid.balance(payer.address), payTo: await paid.balance(paid.payTo) };

    stack.facilitator.setMode({ settle: 'hang' });
    const started = Date.now();
    const res = await pay(stack.server, payment);
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 3000);
    expect(res.status).toBe(402);
    const receipt = decodeHeader(res.headers.get('payment-response')) as { success: boolean; errorReason: string; transaction: string; network: string };
    expect(receipt).toMatchObject({ success: false, errorReason: 'settlement_unknown', network: LOCAL_NETWORK });
    const text = await res.text();
    expect(text).not.toContain('presentValue');
    expect(text).not.toContain('futureValue');
    expect(stack.runs.get('annuity')).toBe(1);
    expect(stack.facilitator.calls).toMatchObject({ verify: 1, settle: 1 });

    const [stored] = await stack.server.runtime.store.listReceipts({ limit: 1 });
    expect(stored).toMatchObject({ tool: 'annuity', status: 'failed', errorReason: 'settlement_unknown', payer: payer.address, amount: '1000', transport: 'http' });

    // The outcome is unknown, so the claim is kept: even with a healthy facilitator the same payment buys nothing more.
    stack.facilitator.setMode({ settle: 'ok' });
    const again = await pay(stack.server, payment);
    expect(again.status).not.toBe(200);
    expect(again.status).toBe(402);
    const refusal = (await again.json()) as { error?: string | { code?: string } };
    expect(reasonOf(refusal)).toBe('settlement_unknown');
    expect(stack.runs.get('annuity')).toBe(1);
    expect(stack.facilitator.calls).toMatchObject({ verify: 1, settle: 1 });
    // The look-alike never forwarded the hung settle, so nothing moved.
    expect(await paid.balance(payer.address)).toBe(before.payer);
    expect(await paid.balance(paid.payTo)).toBe(before.payTo);
  });
});

describe('the MCP path with a facilitator that hangs on verify', () => {
  let stack: RemoteStack;
  let client: Client;
  beforeAll(async () => {
    stack = await startRemoteStack();
    client = await connectHttpClient(stack.server.url);
  });
  afterAll(async () => {
    await client?.close();
    await stack?.close();
  });

  it('answers an error result with facilitator_unavailable (not a thrown exception), never runs the tool, and accepts the same payment later', async () => {
    const payer = paid.payers[5]!;
    const unpaid = await client.callTool({ name: 'annuity', arguments: args });
    expect(unpaid.isError).toBe(true);
    const entry = (unpaid.structuredContent as unknown as PaymentRequired).accepts.find((a) => a.network === LOCAL_NETWORK);
    if (!entry) throw new Error('the local network is not advertised over MCP');
    const payment = await signExactPayment(payer, entry);
    const balance = await paid.balance(payer.address);

    stack.facilitator.setMode({ verify: 'hang' });
    const result = await client.callTool({ name: 'annuity', arguments: args, _meta: { 'x402/payment': payment } });
    expect(result.isError).toBe(true);
    const content = result.content as Array<{ type: string; text: string }>;
    const refusal = JSON.parse(content[0]!.text) as { error: { code: string; message: string } };
    expect(refusal.error.code).toBe('facilitator_unavailable');
    expect(result._meta?.['x402/payment-response']).toBeUndefined();
    expect(stack.runs.get('annuity') ?? 0).toBe(0);
    expect(stack.facilitator.calls).toMatchObject({ verify: 1, settle: 0 });
    expect(await paid.balance(payer.address)).toBe(balance);

    stack.facilitator.setMode({ verify: 'ok' });
    const retried = await client.callTool({ name: 'annuity', arguments: args, _meta: { 'x402/payment': payment } });
    expect(retried.isError).toBeFalsy();
    expect((retried._meta?.['x402/payment-response'] as { success: boolean }).success).toBe(true);
    expect(stack.runs.get('annuity')).toBe(1);
    expect(await paid.balance(payer.address)).toBe(balance - 1000n);
  });
});
