import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AnyToolDefinition } from '../../../src/tool/tool.js';
import { annuity } from '../../../tools/annuity.js';
import { startLookalikeFacilitator, type LookalikeFacilitator } from '../../support/facilitator.js';
import { connectHttpClient } from '../../support/mcp.js';
import { countingTools, LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../../support/paid.js';
import { encodePayment, signExactPayment } from '../../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../../support/server.js';
import { PAY_TO_ENV } from '../../support/pay-to.js';

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
  const facilitator = await startLookalikeFacilitator({
    rpcUrl: paid.chain.rpcUrl,
    chainId: paid.chain.chainId,
    privateKey: key as Hex,
    network: LOCAL_NETWORK,
  });
  const counted = countingTools([annuity] as AnyToolDefinition[]);
  const server = await startTestServer(
    {
      ...serverEnv,
      FACILITATOR_URL: facilitator.url,
      FACILITATOR_TIMEOUT_MS: String(TIMEOUT_MS),
      FACILITATOR_SETTLE_TIMEOUT_MS: String(TIMEOUT_MS),
      FACILITATOR_EVM_ADDRESS: facilitator.address,
    },
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
    const receipt = decodeHeader(res.headers.get('payment-response')) as {
      success: boolean;
      transaction: string;
      network: string;
      payer: string;
    };
    expect(receipt).toMatchObject({ success: true, network: LOCAL_NETWORK, payer: payer.address });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await paid.balance(payer.address)).toBe(before.payer - 1000n);
    expect(await paid.balance(paid.payTo)).toBe(before.payTo + 1000n);
    expect(stack.facilitator.calls).toMatchObject({ verify: 1, settle: 1 });
    expect(stack.runs.get('annuity')).toBe(1);
    const [stored] = await stack.server.runtime.store.ledger.listReceipts({ limit: 1 });
    expect(stored).toMatchObject({
      tool: 'annuity',
      status: 'settled',
      transaction: receipt.transaction,
      transport: 'http',
    });
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
    const res = await pay(stack.server, payment);
    expect(res.status).toBe(502);
    expect(res.headers.get('payment-response')).toBeNull();
    const refusal = (await res.json()) as { error: { code: string; message: string; retryable: boolean } };
    expect(refusal.error.code).toBe('facilitator_unavailable');
    expect(refusal.error.retryable).toBe(true);
    // The hanging facilitator never answers: the server gave up on its own and closed the verify request.
    await vi.waitFor(() => expect(stack.facilitator.abandoned).toEqual({ verify: 1, settle: 0 }));
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

  it('keeps the call pending (503 settlement_outcome_unknown, output withheld, nothing lost) and delivers the stored output when the same payment comes back', async () => {
    const payer = paid.payers[4]!;
    const payment = await signExactPayment(payer, await localEntry(stack.server));
    const before = { payer: await paid.balance(payer.address), payTo: await paid.balance(paid.payTo) };

    stack.facilitator.setMode({ settle: 'hang' });
    const res = await pay(stack.server, payment);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('10');
    // The settle call got no answer: no transaction is known, so the reason is not settlement_pending (which promises a hash).
    const receipt = decodeHeader(res.headers.get('payment-response')) as {
      success: boolean;
      errorReason: string;
      network: string;
      transaction: string;
    };
    expect(receipt).toMatchObject({
      success: false,
      errorReason: 'settlement_outcome_unknown',
      network: LOCAL_NETWORK,
      transaction: '',
    });
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({
      error: { code: 'settlement_outcome_unknown', retryable: true, details: { network: LOCAL_NETWORK } },
    });
    expect(text).not.toContain('presentValue');
    expect(stack.runs.get('annuity')).toBe(1);
    const pending = await stack.server.runtime.store.ledger.listPending();
    expect(pending.map((p) => p.payer)).toEqual([payer.address]);
    expect(await stack.server.runtime.store.ledger.listReceipts()).toEqual([]);

    // Sent again while the settlement still gets no answer: still no transaction to name, and nothing runs again.
    const meanwhile = await pay(stack.server, payment);
    expect(meanwhile.status).toBe(409);
    expect(await meanwhile.json()).toMatchObject({ error: { code: 'settlement_outcome_unknown', retryable: true } });
    expect(stack.runs.get('annuity')).toBe(1);

    // The look-alike never forwarded the hung settle: the retry re-submits it and hands over the kept output.
    stack.facilitator.setMode({ settle: 'ok' });
    const again = await pay(stack.server, payment);
    expect(again.status).toBe(200);
    expect(((await again.json()) as { presentValue: number }).presentValue).toBeCloseTo(772.17, 2);
    const settled = decodeHeader(again.headers.get('payment-response')) as { success: boolean; transaction: string };
    expect(settled.success).toBe(true);
    expect(settled.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(stack.runs.get('annuity')).toBe(1);
    expect(await paid.balance(payer.address)).toBe(before.payer - 1000n);
    expect(await paid.balance(paid.payTo)).toBe(before.payTo + 1000n);
    expect(await stack.server.runtime.store.ledger.listPending()).toEqual([]);
    expect((await stack.server.runtime.store.ledger.listReceipts({ limit: 1 }))[0]).toMatchObject({
      status: 'settled',
      transaction: settled.transaction,
    });

    // The same payment for a different request buys nothing.
    const other = await fetch(stack.server.url + '/api/annuity', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
      body: JSON.stringify({ ...args, periods: 11 }),
    });
    expect(other.status).toBe(402);
    expect(reasonOf((await other.json()) as { error?: string })).toBe('payment_already_used');
    expect(stack.runs.get('annuity')).toBe(1);
    expect(await paid.balance(payer.address)).toBe(before.payer - 1000n);
  });

  it('reconciles on restart a settlement that went through on chain while its answer was lost, and still delivers the output', async () => {
    const payer = paid.payers[5]!;
    const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-reconcile-'));
    const { FACILITATOR_EVM_PRIVATE_KEY: _key, ...serverEnv } = paid.env;
    const env = {
      ...serverEnv,
      FACILITATOR_URL: stack.facilitator.url,
      FACILITATOR_TIMEOUT_MS: String(TIMEOUT_MS),
      FACILITATOR_SETTLE_TIMEOUT_MS: String(TIMEOUT_MS),
      FACILITATOR_EVM_ADDRESS: stack.facilitator.address,
    };
    const first = countingTools([annuity] as AnyToolDefinition[]);
    const server = await startTestServer(env, { tools: first.tools, dataDir });
    const payment = await signExactPayment(payer, await localEntry(server));
    const before = await paid.balance(payer.address);

    stack.facilitator.setMode({ settle: 'work-then-hang' });
    const res = await pay(server, payment);
    expect(res.status).toBe(503);
    expect(await paid.balance(payer.address)).toBe(before - 1000n); // the money moved; the answer was lost
    await server.close();

    stack.facilitator.setMode({ settle: 'ok' });
    const settleCalls = stack.facilitator.calls.settle;
    const second = countingTools([annuity] as AnyToolDefinition[]);
    const restarted = await startTestServer(env, { tools: second.tools, dataDir });
    try {
      await restarted.runtime.reconciled;
      expect(await restarted.runtime.store.ledger.listPending()).toEqual([]);
      expect((await restarted.runtime.store.ledger.listReceipts({ limit: 1 }))[0]).toMatchObject({
        status: 'settled',
        payer: payer.address,
        amount: '1000',
      });
      expect(stack.facilitator.calls.settle).toBe(settleCalls); // the chain answered; nothing was re-submitted

      const again = await pay(restarted, payment);
      expect(again.status).toBe(200);
      expect(((await again.json()) as { presentValue: number }).presentValue).toBeCloseTo(772.17, 2);
      expect(second.runs.get('annuity')).toBeUndefined();
      expect(await paid.balance(payer.address)).toBe(before - 1000n);
    } finally {
      await restarted.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
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
    const entry = (unpaid.structuredContent as unknown as PaymentRequired).accepts.find(
      (a) => a.network === LOCAL_NETWORK,
    );
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

describe('choosing a facilitator per network family', () => {
  it('settles a family in-process when it has a key, remotely when it has a URL, and not at all otherwise', async () => {
    const { loadConfig } = await import('../../../src/config/config.js');
    const { createFacilitator } = await import('../../../src/payments/facilitators/facilitator.js');
    const config = loadConfig({ ...PAY_TO_ENV, ...paid.env, FACILITATOR_URL_ALGORAND: 'http://127.0.0.1:9/never' });
    const facilitator = await createFacilitator(config);
    expect(facilitator.modes).toEqual({ evm: 'in-process', svm: 'none', stellar: 'none', algorand: 'remote' });
    expect(facilitator.mode).toBe('mixed');
    expect(facilitator.supports(LOCAL_NETWORK, 'exact')).toBe(true);
    expect(facilitator.supports('eip155:8453', 'exact')).toBe(true); // an entry with an rpcUrl is registered
    expect(facilitator.supports('algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73ktiC1qzkkit8=', 'exact')).toBe(true);
    expect(facilitator.supports('solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp', 'exact')).toBe(false);
  });

  it('refuses to route a payment for a network no facilitator serves, as an error the broker turns into a 502', async () => {
    const { loadConfig } = await import('../../../src/config/config.js');
    const { createFacilitator } = await import('../../../src/payments/facilitators/facilitator.js');
    const facilitator = await createFacilitator(loadConfig({}));
    expect(facilitator.mode).toBe('none');
    const requirements = {
      scheme: 'exact',
      network: 'eip155:8453',
      asset: '0x',
      amount: '1',
      payTo: '0x',
      maxTimeoutSeconds: 300,
      extra: {},
    };
    await expect(
      facilitator.client.verify(
        { x402Version: 2, accepted: requirements, payload: {} } as never,
        requirements as never,
      ),
    ).rejects.toThrow(/no facilitator is configured for eip155:8453/);
  });
});
