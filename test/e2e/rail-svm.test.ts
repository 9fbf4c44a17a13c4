import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { AccountRole, address, generateKeyPairSigner, type KeyPairSigner } from '@solana/kit';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { decodePaymentResponseHeader, wrapFetchWithPayment } from '@x402/fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEE_PAYER_NOT_ISOLATED, FEE_PAYER_TRANSFERRING_FUNDS, SVM_LIMITS } from '../../src/payments/rails/svm/rail.js';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import {
  LOCAL_SOLANA_NETWORK,
  signSvmPayment,
  startSolanaEnvironment,
  svmClient,
  type SolanaEnvironment,
} from '../support/chain/solana-env.js';
import {
  appendInstruction,
  computeUnitPrice,
  memoSignedBy,
  replaceInstruction,
  resign,
  withSignature,
  withTransferAccount,
} from '../support/chain/solana-tamper.js';
import { connectHttpClient } from '../support/mcp.js';
import { countingTools } from '../support/paid.js';
import { encodePayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { expectWindowRefused, watchPaymentPath } from '../support/window.js';

let sol: SolanaEnvironment;
let server: TestServer;
let mcp: Client;
let runs: Map<string, number>;
let stranger: KeyPairSigner;
const args = { payment: 100, ratePerPeriod: 0.05, periods: 10 };
const body = JSON.stringify(args);

beforeAll(async () => {
  sol = await startSolanaEnvironment(6);
  const counted = countingTools([annuity] as AnyToolDefinition[]);
  runs = counted.runs;
  server = await startTestServer(sol.env, { tools: counted.tools });
  mcp = await connectHttpClient(server.url);
  stranger = await generateKeyPairSigner();
}, 60_000);
afterAll(async () => {
  await mcp?.close();
  await server?.close();
  await sol?.stop();
});

async function challenge(): Promise<PaymentRequired> {
  const res = await fetch(server.url + '/api/annuity', { method: 'POST' });
  expect(res.status).toBe(402);
  return decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
}

async function solanaEntry(): Promise<PaymentRequirements> {
  const entry = (await challenge()).accepts.find((a) => a.network === LOCAL_SOLANA_NETWORK);
  if (!entry) throw new Error('the local Solana network is not advertised');
  return entry;
}

/** A payment from the official client for the advertised Solana entry (or a changed copy of it). */
async function pay(payer: KeyPairSigner, change: Partial<PaymentRequirements> = {}): Promise<PaymentPayload> {
  const entry = await solanaEntry();
  const payment = await signSvmPayment(payer, { ...entry, ...change }, sol.rpc.url);
  return payment;
}

function post(payment: PaymentPayload) {
  return fetch(server.url + '/api/annuity', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body,
  });
}

const ledgerState = async () => ({
  runs: runs.get('annuity') ?? 0,
  landed: sol.rpc.landed.length,
  payTo: await sol.balance(sol.payTo),
});

describe('a paid call on Solana, settled on the local SVM', () => {
  it('pays over HTTP with @x402/fetch and the official ExactSvmScheme client, and returns the receipt', async () => {
    const payer = sol.payers[0]!;
    const before = { ...(await ledgerState()), payer: await sol.balance(payer.address) };
    const res = await wrapFetchWithPayment(fetch, svmClient(payer, sol.rpc.url))(server.url + '/api/annuity', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { presentValue: number }).presentValue).toBeCloseTo(772.1734929, 5);
    const receipt = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!);
    expect(receipt).toMatchObject({ success: true, network: LOCAL_SOLANA_NETWORK, payer: payer.address });
    expect(receipt.transaction).toBe(sol.rpc.landed.at(-1));
    expect(runs.get('annuity')).toBe(before.runs + 1);
    expect(await sol.balance(payer.address)).toBe(before.payer - 1000n);
    expect(await sol.balance(sol.payTo)).toBe(before.payTo + 1000n);
    const [stored] = await server.runtime.store.ledger.listReceipts({ limit: 1 });
    expect(stored).toMatchObject({
      tool: 'annuity',
      status: 'settled',
      network: LOCAL_SOLANA_NETWORK,
      transaction: receipt.transaction,
      amount: '1000',
      transport: 'http',
    });
  });

  it('pays over MCP (streamable HTTP) with the payment in _meta and returns the receipt in _meta', async () => {
    const payer = sol.payers[1]!;
    const before = { ...(await ledgerState()), payer: await sol.balance(payer.address) };
    const unpaid = await mcp.callTool({ name: 'annuity', arguments: args });
    expect(unpaid.isError).toBe(true);
    const payment = await svmClient(payer, sol.rpc.url).createPaymentPayload(
      unpaid.structuredContent as unknown as PaymentRequired,
    );
    expect(payment.accepted.network).toBe(LOCAL_SOLANA_NETWORK);
    const result = await mcp.callTool({ name: 'annuity', arguments: args, _meta: { 'x402/payment': payment } });
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { presentValue: number }).presentValue).toBeCloseTo(772.1734929, 5);
    const receipt = result._meta?.['x402/payment-response'] as { success: boolean; transaction: string; payer: string };
    expect(receipt).toMatchObject({ success: true, payer: payer.address, transaction: sol.rpc.landed.at(-1) });
    expect(runs.get('annuity')).toBe(before.runs + 1);
    expect(await sol.balance(payer.address)).toBe(before.payer - 1000n);
    expect(await sol.balance(sol.payTo)).toBe(before.payTo + 1000n);
  });
});

type Tamper = [label: string, reason: string, make: (payer: KeyPairSigner) => Promise<PaymentPayload>];
const tampered: Tamper[] = [
  [
    'an amount other than the price (echoed in accepted)',
    'no_matching_payment_requirements',
    (p) => pay(p, { amount: '1' }),
  ],
  [
    'an amount other than the price (accepted left unchanged)',
    'invalid_exact_svm_payload_amount_mismatch',
    async (p) => ({ ...(await pay(p, { amount: '999' })), accepted: await solanaEntry() }),
  ],
  [
    'a transfer to an account that is not the pay-to’s',
    'invalid_exact_svm_payload_recipient_mismatch',
    async (p) => resign(await pay(p), p, (m) => withTransferAccount(m, 2, stranger.address)),
  ],
  [
    'another mint',
    'invalid_exact_svm_payload_mint_mismatch',
    async (p) => ({ ...(await pay(p, { asset: sol.otherMint })), accepted: await solanaEntry() }),
  ],
  [
    'another network',
    'no_matching_payment_requirements',
    (p) => pay(p, { network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp' }),
  ],
  [
    'a forged payer signature',
    'invalid_exact_svm_payload_signature_invalid',
    async (p) => withSignature(await pay(p), p.address, 'flipped'),
  ],
  ['our fee payer as the transfer authority', FEE_PAYER_TRANSFERRING_FUNDS, () => pay(sol.feePayer)],
  [
    'our fee payer listed in another instruction',
    FEE_PAYER_NOT_ISOLATED,
    async (p) => resign(await pay(p), p, (m) => appendInstruction(m, memoSignedBy(sol.feePayer.address))),
  ],
  [
    'a transaction paid by another fee payer',
    'invalid_exact_svm_fee_payer_mismatch',
    async (p) => ({ ...(await pay(p, { extra: { feePayer: stranger.address } })), accepted: await solanaEntry() }),
  ],
  [
    'a compute unit price above the cap',
    'invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high',
    async (p) =>
      resign(await pay(p), p, (m) =>
        replaceInstruction(m, 1, computeUnitPrice(BigInt(SVM_LIMITS.maxPriorityFeeMicroLamports) * 100n)),
      ),
  ],
];

describe('tampered Solana payments are refused with their reason and the tool never runs', () => {
  for (const [label, reason, make] of tampered) {
    it(`refuses ${label} over HTTP`, async () => {
      const payer = sol.payers[2]!;
      const before = { ...(await ledgerState()), payer: await sol.balance(payer.address) };
      const res = await post(await make(payer));
      expect(res.status).toBe(402);
      const refusal = (await res.json()) as { error: string; message: string };
      expect(refusal.error).toBe(reason);
      expect(refusal.message).toMatch(/sign|pick/i);
      expect(await ledgerState()).toEqual({ runs: before.runs, landed: before.landed, payTo: before.payTo });
      expect(await sol.balance(payer.address)).toBe(before.payer);
    });
  }

  it('refuses an expired blockhash over MCP (the ledger moved on after signing)', async () => {
    const payer = sol.payers[2]!;
    const payment = await pay(payer);
    sol.ledger.svm.expireBlockhash();
    const before = await ledgerState();
    const result = await mcp.callTool({ name: 'annuity', arguments: args, _meta: { 'x402/payment': payment } });
    expect(result.isError).toBe(true);
    const refusal = result.structuredContent as { error: string; message: string };
    expect(refusal.error).toBe('invalid_exact_svm_transaction_simulation_failed');
    // Our sentence, not the RPC's text (the facilitator's message is logged only).
    expect(refusal.message).toMatch(/failed simulation \(an expired blockhash/);
    expect(await ledgerState()).toEqual(before);
  });

  it('refuses a durable-nonce transaction (it never expires) before claiming or verifying it; a blockhash-bound one pays', async () => {
    const payer = sol.payers[2]!;
    const watch = watchPaymentPath(server.runtime);
    const before = { ...(await ledgerState()), ...watch };
    // AdvanceNonceAccount (System program instruction 4) first: the runtime then takes the lifetime from a nonce account.
    const advanceNonce = {
      programAddress: address('11111111111111111111111111111111'),
      accounts: [
        { address: stranger.address, role: AccountRole.WRITABLE },
        { address: address('SysvarRecentB1ockHashes11111111111111111111'), role: AccountRole.READONLY },
        { address: payer.address, role: AccountRole.READONLY_SIGNER },
      ],
      data: new Uint8Array([4, 0, 0, 0]),
    };
    const durable = await resign(
      await pay(payer),
      payer,
      (m) => ({ ...m, instructions: [advanceNonce, ...m.instructions] }) as typeof m,
    );
    await expectWindowRefused(await post(durable), 300);
    expect({ ...watch }).toEqual({ claims: before.claims, verifies: before.verifies });
    expect((await post(await pay(payer))).status).toBe(200);
    expect({ ...watch }).toEqual({ claims: before.claims + 1, verifies: before.verifies + 1 });
    expect(await ledgerState()).toEqual({
      runs: before.runs + 1,
      landed: before.landed + 1,
      payTo: before.payTo + 1000n,
    });
  });
});

describe('one Solana payment buys one execution and one settlement', () => {
  it('refuses the same transaction sent again, over HTTP and then over MCP', async () => {
    const payer = sol.payers[3]!;
    const payment = await pay(payer);
    const before = await ledgerState();
    expect((await post(payment)).status).toBe(200);
    const again = await post(payment);
    expect(again.status).toBe(402);
    expect(((await again.json()) as { error: string }).error).toBe('payment_already_used');
    const viaMcp = await mcp.callTool({ name: 'annuity', arguments: args, _meta: { 'x402/payment': payment } });
    expect(viaMcp.isError).toBe(true);
    expect((viaMcp.structuredContent as { error: string }).error).toBe('payment_already_used');
    expect(await ledgerState()).toEqual({
      runs: before.runs + 1,
      landed: before.landed + 1,
      payTo: before.payTo + 1000n,
    });
  });

  it('lets 5 concurrent copies of one transaction run the tool once and land once', async () => {
    const payer = sol.payers[4]!;
    const payment = await pay(payer);
    const before = { ...(await ledgerState()), payer: await sol.balance(payer.address) };
    const responses = await Promise.all(Array.from({ length: 5 }, () => post(payment)));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    const refusals = await Promise.all(
      responses.filter((r) => r.status !== 200).map(async (r) => [r.status, JSON.stringify(await r.json())] as const),
    );
    for (const [status, text] of refusals) {
      expect([402, 409]).toContain(status);
      expect(text).toMatch(/payment_in_flight|payment_already_used/);
    }
    expect(await ledgerState()).toEqual({
      runs: before.runs + 1,
      landed: before.landed + 1,
      payTo: before.payTo + 1000n,
    });
    expect(await sol.balance(payer.address)).toBe(before.payer - 1000n);
  });

  it('lets the same transaction sent over HTTP and MCP at once buy one execution', async () => {
    const payer = sol.payers[5]!;
    const payment = await pay(payer);
    const before = await ledgerState();
    const [http, viaMcp] = await Promise.all([
      post(payment),
      mcp.callTool({ name: 'annuity', arguments: args, _meta: { 'x402/payment': payment } }),
    ]);
    expect([http.status === 200, !viaMcp.isError].filter(Boolean)).toHaveLength(1);
    expect(await ledgerState()).toEqual({
      runs: before.runs + 1,
      landed: before.landed + 1,
      payTo: before.payTo + 1000n,
    });
  });

  it('asked the look-alike RPC only for methods it implements', () => {
    expect(sol.rpc.unknownMethods).toEqual([]);
    expect([...sol.rpc.calls.keys()].sort()).toEqual([
      'getAccountInfo',
      'getLatestBlockhash',
      'getSignatureStatuses',
      'sendTransaction',
      'simulateTransaction',
    ]);
  });
});
