import { x402Client } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { ExactEvmSchemeV1 } from '@x402/evm/exact/v1/client';
import type { PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_MAINNET } from '../../src/shared/networks.js';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { startBaseEnvironment, type BaseEnvironment } from '../support/chain/permit2-env.js';
import { officialUptoPayment } from '../support/chain/permit2-sign.js';
import { countingTools } from '../support/paid.js';
import { encodePayment, officialPayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { rpcMethods, startFlakyRpc, type FlakyRpc, type RpcFault } from '../support/upstreams/flaky-rpc.js';
import { v1Echo } from '../support/tools.js';

let base: BaseEnvironment;
let rpc: FlakyRpc;
let server: TestServer;
let runs: Map<string, number>;
const unhandled: unknown[] = [];
const recordUnhandled = (reason: unknown) => void unhandled.push(reason);
const body = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });

beforeAll(async () => {
  process.on('unhandledRejection', recordUnhandled);
  base = await startBaseEnvironment(3, { permit2: { approved: 3 } });
  rpc = await startFlakyRpc(base.chain.rpcUrl);
  const counted = countingTools([annuity, v1Echo] as AnyToolDefinition[]);
  runs = counted.runs;
  // Every chain request of the server goes through the flaky RPC; short timeouts keep the hangs quick.
  const env = {
    ...base.env,
    NETWORKS_JSON: JSON.stringify({
      networks: [{ id: BASE_MAINNET, rpcUrl: rpc.url, label: 'Base (local chain behind a flaky RPC)' }],
    }),
  };
  server = await startTestServer(
    { ...env, FACILITATOR_TIMEOUT_MS: '2000', FACILITATOR_SETTLE_TIMEOUT_MS: '4000' },
    { tools: counted.tools },
  );
}, 120_000);
afterAll(async () => {
  process.off('unhandledRejection', recordUnhandled);
  rpc?.heal();
  await server?.close();
  await rpc?.stop();
  await base?.stop();
});

/** One in-process EVM rail: how a payer pays for one call on it, and how that call is sent. */
interface RailCase {
  name: string;
  tool: string;
  pay(payer: PrivateKeyAccount): Promise<PaymentPayload>;
  send(payment: PaymentPayload): Promise<Response>;
}

const v2Challenge = async (): Promise<PaymentRequired> =>
  decodeHeader(
    (await fetch(server.url + '/api/annuity', { method: 'POST' })).headers.get('payment-required'),
  ) as PaymentRequired;
const postAnnuity = (payment: PaymentPayload) =>
  fetch(server.url + '/api/annuity', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body,
  });

const RAILS: RailCase[] = [
  {
    name: 'EVM exact (EIP-3009)',
    tool: 'annuity',
    pay: async (payer) => officialPayment(payer, await v2Challenge(), BASE_MAINNET),
    send: postAnnuity,
  },
  {
    name: 'EVM upto (Permit2)',
    tool: 'annuity',
    pay: async (payer) => officialUptoPayment(payer, await v2Challenge(), BASE_MAINNET),
    send: postAnnuity,
  },
  {
    name: 'EVM exact version 1',
    tool: 'v1-echo',
    pay: async (payer) => {
      const challenge = (await (await fetch(server.url + '/api/test/v1-echo')).json()) as PaymentRequired;
      return new x402Client().registerV1('base', new ExactEvmSchemeV1(payer)).createPaymentPayload(challenge as never);
    },
    send: (payment) =>
      fetch(server.url + '/api/test/v1-echo?note=paid', { headers: { 'x-payment': encodePayment(payment) } }),
  },
];

/** Status, refusal code and whether the tool's output came back. */
async function outcome(res: Response): Promise<{ status: number; code: string; delivered: boolean }> {
  const json = (await res.json()) as Record<string, unknown>;
  const error = json.error as string | { code: string } | undefined;
  const code = typeof error === 'string' ? error : (error?.code ?? '');
  return { status: res.status, code, delivered: 'presentValue' in json || 'note' in json };
}

const healthy = async () => (await fetch(server.url + '/healthz')).status;

/**
 * A 503 for a settlement whose outcome is open, under the reason that matches what the receipt knows:
 * `settlement_pending` with the broadcast transaction's hash, or `settlement_outcome_unknown` with none (the settle
 * call ran out of time before the rail could name its transaction).
 */
async function openSettlement(res: Response): Promise<void> {
  const receipt = decodeHeader(res.headers.get('payment-response') ?? res.headers.get('x-payment-response')) as {
    success: boolean;
    errorReason: string;
    transaction: string;
  };
  expect(await outcome(res)).toEqual({ status: 503, code: receipt.errorReason, delivered: false });
  expect(receipt.success).toBe(false);
  if (receipt.errorReason === 'settlement_pending') expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
  else expect(receipt).toMatchObject({ errorReason: 'settlement_outcome_unknown', transaction: '' });
}

/** Heals the RPC, pays the same payment again and checks it buys exactly one call, and no second one. */
async function paysOnceWhenHealed(
  rail: RailCase,
  payer: PrivateKeyAccount,
  payment: PaymentPayload,
  before: bigint,
): Promise<void> {
  rpc.heal();
  const ran = runs.get(rail.tool) ?? 0;
  expect(await outcome(await rail.send(payment))).toMatchObject({ status: 200, delivered: true });
  expect(await base.balance(payer.address)).toBe(before - 1000n);
  expect(await outcome(await rail.send(payment))).toMatchObject({
    status: 402,
    code: 'payment_already_used',
    delivered: false,
  });
  expect(runs.get(rail.tool)).toBe(ran + 1);
  expect(await base.balance(payer.address)).toBe(before - 1000n);
}

const FAULTS: RpcFault[] = ['429', '500', 'garbage', 'wrong', 'hang'];

describe.each(RAILS.map((rail, i) => ({ rail, i })))('$rail.name through an RPC that fails', ({ rail, i }) => {
  it('answers 502 facilitator_unavailable for a 429, a 500, garbage, a wrong JSON-RPC answer and a hang during verification, charges nothing and stays up; the same payment then pays once', async () => {
    const payer = base.payers[i]!;
    const payment = await rail.pay(payer);
    const before = await base.balance(payer.address);
    const ran = runs.get(rail.tool) ?? 0;
    for (const fault of FAULTS) {
      rpc.fail(fault);
      expect(await outcome(await rail.send(payment)), fault).toEqual({
        status: 502,
        code: 'facilitator_unavailable',
        delivered: false,
      });
      rpc.heal();
      expect(await healthy()).toBe(200);
    }
    expect(runs.get(rail.tool) ?? 0).toBe(ran);
    expect(await base.balance(payer.address)).toBe(before);
    await paysOnceWhenHealed(rail, payer, payment, before);
    expect(unhandled).toEqual([]);
  });

  it('withholds the output and charges nothing when the nonce, gas or send request fails before the transaction reached the node (402 facilitator_unavailable); the same payment then pays once', async () => {
    const payer = base.payers[i]!;
    const payment = await rail.pay(payer);
    const before = await base.balance(payer.address);
    for (const fault of ['429', '500', 'garbage', 'wrong'] as const) {
      rpc.fail(fault, rpcMethods('eth_getTransactionCount', 'eth_estimateGas'));
      expect(await outcome(await rail.send(payment)), fault).toEqual({
        status: 402,
        code: 'facilitator_unavailable',
        delivered: false,
      });
      rpc.heal();
    }
    rpc.fail('429', rpcMethods('eth_sendRawTransaction'));
    expect(await outcome(await rail.send(payment))).toEqual({
      status: 402,
      code: 'facilitator_unavailable',
      delivered: false,
    });
    expect(await base.balance(payer.address)).toBe(before);
    expect(await healthy()).toBe(200);
    await paysOnceWhenHealed(rail, payer, payment, before);
    expect(unhandled).toEqual([]);
  });

  it('settles from the receipt when the node took the transaction but its answer was lost: the output once, charged once', async () => {
    const payer = base.payers[i]!;
    const payment = await rail.pay(payer);
    const before = await base.balance(payer.address);
    const ran = runs.get(rail.tool) ?? 0;
    rpc.fail('lose', rpcMethods('eth_sendRawTransaction'), 1);
    expect(await outcome(await rail.send(payment))).toMatchObject({ status: 200, delivered: true });
    expect(await base.balance(payer.address)).toBe(before - 1000n);
    expect(await outcome(await rail.send(payment))).toMatchObject({
      status: 402,
      code: 'payment_already_used',
      delivered: false,
    });
    expect(runs.get(rail.tool)).toBe(ran + 1);
    expect(await base.balance(payer.address)).toBe(before - 1000n);
    expect(unhandled).toEqual([]);
  });

  it('answers 503 with an open settlement (settlement_pending with its hash, or settlement_outcome_unknown) when a sent transaction cannot be followed, and delivers the output once, charged once, to the same payment once the RPC is back', async () => {
    const payer = base.payers[i]!;
    const payment = await rail.pay(payer);
    const before = await base.balance(payer.address);
    const ran = runs.get(rail.tool) ?? 0;
    rpc.fail(FAULTS[i % 3]!, rpcMethods('eth_getTransactionReceipt', 'eth_getTransactionByHash'));
    await openSettlement(await rail.send(payment));
    expect(await healthy()).toBe(200);
    rpc.heal();
    const retried = await outcome(await rail.send(payment));
    expect(retried).toMatchObject({ status: 200, delivered: true });
    expect(await outcome(await rail.send(payment))).toMatchObject({ status: 200, delivered: true });
    expect(runs.get(rail.tool)).toBe(ran + 1);
    expect(await base.balance(payer.address)).toBe(before - 1000n);
    expect(unhandled).toEqual([]);
  });

  it('answers 503 with an open settlement when the send got no readable answer and never reached the node; once the RPC is back, the same payment settles: the output without running again, charged once', async () => {
    const payer = base.payers[i]!;
    const payment = await rail.pay(payer);
    const before = await base.balance(payer.address);
    const ran = runs.get(rail.tool) ?? 0;
    rpc.fail(i === 0 ? 'hang' : i === 1 ? '500' : 'garbage', rpcMethods('eth_sendRawTransaction'));
    await openSettlement(await rail.send(payment));
    expect(await base.balance(payer.address)).toBe(before);
    expect(await healthy()).toBe(200);
    rpc.heal();
    expect(await outcome(await rail.send(payment))).toMatchObject({ status: 200, delivered: true });
    expect(runs.get(rail.tool)).toBe(ran + 1);
    expect(await base.balance(payer.address)).toBe(before - 1000n);
    expect(unhandled).toEqual([]);
  });
});
