import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { createWalletClient, http } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { localViemChain } from '../support/chain/token.js';
import { testUsdcAbi } from '../support/chain/token.js';
import { countingTools, LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { failingTool, notBuiltTool, sideEffectTool } from '../support/tools.js';

let paid: PaidEnvironment;
let server: TestServer;
let runs: Map<string, number>;
const body = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });

beforeAll(async () => {
  paid = await startPaidEnvironment(5);
  const drainer = paid.payers[4]!;
  const drain = sideEffectTool('drains-payer', async () => {
    const wallet = createWalletClient({
      account: drainer,
      chain: localViemChain(paid.chain),
      transport: http(paid.chain.rpcUrl),
    });
    const all = await paid.balance(drainer.address);
    await wallet.writeContract({
      address: paid.token,
      abi: testUsdcAbi,
      functionName: 'transfer',
      args: [paid.payTo, all],
    });
  });
  const slow = sideEffectTool('slow', () => new Promise((r) => setTimeout(r, 400)));
  const counted = countingTools([annuity, failingTool, drain, notBuiltTool, slow] as AnyToolDefinition[]);
  runs = counted.runs;
  server = await startTestServer(paid.env, { tools: counted.tools });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await paid?.stop();
});

async function localEntry(path: string): Promise<PaymentRequirements> {
  const res = await fetch(server.url + path, { method: 'POST' });
  const challenge = decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
  const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK);
  if (!entry) throw new Error('the local network is not advertised');
  return entry;
}

function pay(path: string, payment: unknown, payload = body) {
  return fetch(server.url + path, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'payment-signature': typeof payment === 'string' ? payment : encodePayment(payment),
    },
    body: payload,
  });
}

describe('a paid EVM exact call over HTTP, settled on a local chain', () => {
  it('runs the tool, settles exactly the price and returns the result with a receipt', async () => {
    const payer = paid.payers[0]!;
    const before = { payer: await paid.balance(payer.address), payTo: await paid.balance(paid.payTo) };
    const entry = await localEntry('/api/annuity');
    const res = await pay('/api/annuity', await signExactPayment(payer, entry));
    expect(res.status).toBe(200);
    const result = (await res.json()) as { presentValue: number };
    expect(result.presentValue).toBeCloseTo(772.1734929, 5);
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
    const stored = await server.runtime.store.ledger.listReceipts({ limit: 5 });
    expect(stored[0]).toMatchObject({
      tool: 'annuity',
      status: 'settled',
      transaction: receipt.transaction,
      amount: '1000',
      transport: 'http',
    });
  });

  it('refuses the same authorization sent again, without running the tool a second time', async () => {
    const payer = paid.payers[1]!;
    const payment = await signExactPayment(payer, await localEntry('/api/annuity'));
    const before = runs.get('annuity') ?? 0;
    const first = await pay('/api/annuity', payment);
    expect(first.status).toBe(200);
    const again = await pay('/api/annuity', payment);
    expect(again.status).toBe(402);
    const refused = (await again.json()) as { error: string; message: string };
    expect(refused.error).toBe('payment_already_used');
    expect(runs.get('annuity')).toBe(before + 1);
  });

  it('lets 20 concurrent copies of one authorization buy exactly one execution and one settlement', async () => {
    const payer = paid.payers[2]!;
    const payment = encodePayment(await signExactPayment(payer, await localEntry('/api/annuity')));
    const balanceBefore = await paid.balance(payer.address);
    const before = runs.get('annuity') ?? 0;
    const responses = await Promise.all(Array.from({ length: 20 }, () => pay('/api/annuity', payment)));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s !== 200).every((s) => s === 409 || s === 402)).toBe(true);
    expect(runs.get('annuity')).toBe(before + 1);
    expect(await paid.balance(payer.address)).toBe(balanceBefore - 1000n);
  });

  it('never settles a call whose handler failed, and leaves the authorization usable', async () => {
    const payer = paid.payers[3]!;
    const entry = await localEntry('/api/test/always-fails');
    const payment = await signExactPayment(payer, entry);
    const balanceBefore = await paid.balance(payer.address);
    const res = await pay('/api/test/always-fails', payment, '{}');
    expect(res.status).toBe(502);
    expect(res.headers.get('payment-response')).toBeNull();
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('upstream_unavailable');
    expect(await paid.balance(payer.address)).toBe(balanceBefore);
    const retried = await pay('/api/test/always-fails', payment, '{}');
    expect(retried.status).toBe(502);
    expect(runs.get('always-fails')).toBe(2);
    expect(await paid.balance(payer.address)).toBe(balanceBefore);
  });

  it('answers a paid call to an endpoint this server has not configured with 501 and settles nothing', async () => {
    const payer = paid.payers[3]!;
    const payment = await signExactPayment(payer, await localEntry('/api/test/not-built'));
    const balanceBefore = await paid.balance(payer.address);
    const res = await pay('/api/test/not-built', payment, JSON.stringify({ coin: 'BTC' }));
    expect(res.status).toBe(501);
    expect(res.headers.get('payment-response')).toBeNull();
    const error = ((await res.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe('not_implemented');
    expect(error.message).toBe('not-built is not available on this server. Nothing was charged.');
    expect(await paid.balance(payer.address)).toBe(balanceBefore);
  });

  it('settles nothing when the HTTP client disconnects before the tool finished, and releases the payment', async () => {
    const payer = paid.payers[3]!;
    const payment = await signExactPayment(payer, await localEntry('/api/test/slow'));
    const balanceBefore = await paid.balance(payer.address);
    const controller = new AbortController();
    const call = fetch(server.url + '/api/test/slow', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
      body: '{}',
      signal: controller.signal,
    });
    while ((runs.get('slow') ?? 0) === 0) await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    await expect(call).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 600));
    expect(await paid.balance(payer.address)).toBe(balanceBefore);
    const retried = await pay('/api/test/slow', payment, '{}');
    expect(retried.status).toBe(200);
    expect(await paid.balance(payer.address)).toBe(balanceBefore - 1000n);
  });

  it('withholds the output and answers 402 with the failed receipt when settlement fails', async () => {
    const payer = paid.payers[4]!;
    const payment = await signExactPayment(payer, await localEntry('/api/test/drains-payer'));
    const res = await pay('/api/test/drains-payer', payment, '{}');
    expect(res.status).toBe(402);
    const text = await res.text();
    expect(text).not.toContain('withheld');
    const receipt = decodeHeader(res.headers.get('payment-response')) as { success: boolean; errorReason: string };
    expect(receipt.success).toBe(false);
    expect(receipt.errorReason).toBeTruthy();
    const stored = await server.runtime.store.ledger.listReceipts({ limit: 1 });
    expect(stored[0]).toMatchObject({ tool: 'drains-payer', status: 'failed' });
  });
});

describe('tampered and malformed payments are refused before the tool runs', () => {
  const cases: Array<[string, (e: PaymentRequirements) => Promise<unknown>]> = [
    [
      'a lower amount than advertised',
      async (e) => signExactPayment(paid.payers[0]!, { ...e, amount: '1' }, { value: '1' }),
    ],
    ['an authorization for less than the price', async (e) => signExactPayment(paid.payers[0]!, e, { value: '999' })],
    [
      'another pay-to address',
      async (e) =>
        signExactPayment(paid.payers[0]!, { ...e, payTo: paid.payers[1]!.address }, { to: paid.payers[1]!.address }),
    ],
    [
      'an authorization to another recipient',
      async (e) => signExactPayment(paid.payers[0]!, e, { to: paid.payers[1]!.address }),
    ],
    ['another network', async (e) => signExactPayment(paid.payers[0]!, { ...e, network: 'eip155:8453' })],
    ['a signature for another chain id', async (e) => signExactPayment(paid.payers[0]!, e, { chainId: 1 })],
    [
      'an expired authorization',
      async (e) => signExactPayment(paid.payers[0]!, e, { validBefore: BigInt(Math.floor(Date.now() / 1000) - 60) }),
    ],
    [
      'an authorization not yet valid',
      async (e) => signExactPayment(paid.payers[0]!, e, { validAfter: BigInt(Math.floor(Date.now() / 1000) + 3600) }),
    ],
    [
      'a forged signature',
      async (e) => {
        const p = (await signExactPayment(paid.payers[0]!, e)) as unknown as { payload: { signature: string } };
        p.payload.signature = p.payload.signature.slice(0, -4) + (p.payload.signature.endsWith('1b') ? '0000' : '1b1b');
        return p;
      },
    ],
    [
      'a payment signed by someone without funds',
      async (e) => signExactPayment((await import('viem/accounts')).privateKeyToAccount(`0x${'42'.repeat(32)}`), e),
    ],
  ];
  for (const [label, make] of cases) {
    it(`refuses ${label} with a reason and never runs the tool`, async () => {
      const before = runs.get('annuity') ?? 0;
      const balance = await paid.balance(paid.payers[0]!.address);
      const res = await pay('/api/annuity', await make(await localEntry('/api/annuity')));
      expect([400, 402]).toContain(res.status);
      const refusal = (await res.json()) as { error: unknown };
      expect(refusal.error).toBeTruthy();
      expect(runs.get('annuity') ?? 0).toBe(before);
      expect(await paid.balance(paid.payers[0]!.address)).toBe(balance);
    });
  }

  const malformed: Array<[string, string]> = [
    ['not base64', '%%%not-base64%%%'],
    ['base64 of something that is not JSON', Buffer.from('hello').toString('base64')],
    ['JSON that is not a payment', Buffer.from('{"x402Version":2}').toString('base64')],
    ['an empty header', ''],
    ['a long run of base64 that decodes to garbage', 'A'.repeat(12_000)],
  ];
  for (const [label, header] of malformed) {
    it(`answers a payment header that is ${label} with 400 and a reason`, async () => {
      const res = await pay('/api/annuity', header);
      expect(res.status).toBe(400);
      const refusal = (await res.json()) as { error: { code: string; message: string } };
      expect(refusal.error.code).toBe('invalid_payment');
      expect(refusal.error.message.length).toBeGreaterThan(10);
    });
  }

  it('answers a payment header beyond the HTTP header limit with 431, not a crash', async () => {
    const res = await pay('/api/annuity', 'A'.repeat(70_000)); // past the 64 KiB the server reads (over 32 KiB: a 400, see test/http/payment-bounds)
    expect(res.status).toBe(431);
    const after = await fetch(server.url + '/api/annuity', { method: 'POST' });
    expect(after.status).toBe(402);
  });

  it('answers a v1 X-PAYMENT header on a v2 endpoint with the header and version to use', async () => {
    const res = await fetch(server.url + '/api/annuity', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-payment': encodePayment({ x402Version: 1 }) },
      body,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/PAYMENT-SIGNATURE/);
  });

  it('validates the body before looking at the payment: invalid input is a 400 naming the field, never a charge', async () => {
    const payment = await signExactPayment(paid.payers[0]!, await localEntry('/api/annuity'));
    const res = await pay('/api/annuity', payment, JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: -3 }));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { field: string } }).error.field).toBe('periods');
  });
});

describe('the replay guard survives a restart', () => {
  it('refuses, after a restart on the same data directory, a payment settled before it', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-restart-'));
    const payer = paid.payers[0]!;
    const first = await startTestServer(paid.env, { dataDir });
    const challenge = decodeHeader(
      (await fetch(first.url + '/api/annuity', { method: 'POST' })).headers.get('payment-required'),
    ) as PaymentRequired;
    const payment = encodePayment(
      await signExactPayment(
        payer,
        challenge.accepts.find((a) => a.network === LOCAL_NETWORK)!,
      ),
    );
    const call = (url: string) =>
      fetch(url + '/api/annuity', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'payment-signature': payment },
        body,
      });
    expect((await call(first.url)).status).toBe(200);
    await first.close();
    const second = await startTestServer(paid.env, { dataDir });
    try {
      const again = await call(second.url);
      expect(again.status).toBe(402);
      expect(((await again.json()) as { error: string }).error).toBe('payment_already_used');
    } finally {
      await second.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
