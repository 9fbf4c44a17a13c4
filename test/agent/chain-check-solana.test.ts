import {
  createSolanaRpc,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getTransactionDecoder,
  partiallySignTransaction,
  type Address,
  type Signature,
} from '@solana/kit';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizationState } from '../../src/agent/chain-check.js';
import { loadWallets } from '../../src/agent/wallets.js';
import type { NetworkEntry } from '../../src/shared/networks.js';
import { decodeSvmPayment } from '../../src/payments/rails/svm/transaction.js';
import { newSolanaKeypairBytes, startSolanaEnvironment, type SolanaEnvironment } from '../support/chain/solana-env.js';
import { encodePayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';

let sol: SolanaEnvironment;
let server: TestServer;
let networks: NetworkEntry[];
let entry: PaymentRequirements;
let payer: Address;
let payerSecret: Uint8Array;
const body = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });

beforeAll(async () => {
  sol = await startSolanaEnvironment(0);
  payerSecret = newSolanaKeypairBytes();
  const wallets = await loadWallets({ svm: payerSecret }, []);
  payer = wallets.addresses.svm as Address;
  await sol.ledger.fund(payer, sol.mint, 10_000_000n);
  server = await startTestServer(sol.env);
  networks = [...server.runtime.config.networks];
  const challenge = decodeHeader(
    (await fetch(server.url + '/api/annuity', { method: 'POST' })).headers.get('payment-required'),
  ) as PaymentRequired;
  entry = challenge.accepts.find((a) => a.network === sol.network.id)!;
}, 120_000);
afterAll(async () => {
  await server?.close();
  await sol?.stop();
});

/** A payment signed the way the agent signs one: its own wallets (the official `ExactSvmScheme`) for one advertised option. */
async function agentPayment(option: PaymentRequirements = entry): Promise<PaymentPayload> {
  const wallets = await loadWallets({ svm: payerSecret }, networks);
  const challenge: PaymentRequired = {
    x402Version: 2,
    resource: { url: server.url + '/api/annuity', description: '', mimeType: 'application/json' },
    accepts: [option],
  };
  return wallets.clientFor(option, 2, BigInt(option.amount)).createPaymentPayload(challenge);
}

const settle = async (payment: PaymentPayload) =>
  fetch(server.url + '/api/annuity', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body,
  });
const state = (payment: PaymentPayload, table = networks) =>
  authorizationState(payment, { network: sol.network.id, asset: sol.mint }, table, 5000);
const payerSignature = (payment: PaymentPayload) =>
  getBase58Decoder().decode(decodeSvmPayment(payment)!.transaction.signatures[payer]!);

/** Co-signs as the seller's fee payer and sends without a preflight check, so a transfer that fails in the token program still lands. */
async function landUnchecked(payment: PaymentPayload): Promise<Signature> {
  const wire = (payment.payload as { transaction: string }).transaction;
  const tx = await partiallySignTransaction(
    [sol.feePayer.keyPair],
    getTransactionDecoder().decode(getBase64Encoder().encode(wire)),
  );
  return createSolanaRpc(sol.rpc.url)
    .sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64', skipPreflight: true })
    .send();
}

describe('the Solana look-alike answers the history methods as a Solana node does', () => {
  it("lists the payer's transactions newest first and serves each with its signatures, balances and status", async () => {
    const payment = await agentPayment();
    const response = await settle(payment);
    expect(response.status).toBe(200);
    const settled = decodeHeader(response.headers.get('payment-response')) as { transaction: Signature };
    const rpc = createSolanaRpc(sol.rpc.url);
    const recent = await rpc.getSignaturesForAddress(payer, { limit: 25 }).send();
    expect(recent[0]).toMatchObject({
      signature: settled.transaction,
      err: null,
      confirmationStatus: 'finalized',
      memo: expect.stringMatching(/^\[\d+\] /),
    });
    expect(recent.length).toBeGreaterThanOrEqual(2); // the settlement and the set-up that funded the payer
    expect(await rpc.getSignaturesForAddress(payer, { limit: 1 }).send()).toHaveLength(1);
    expect(
      (await rpc.getSignaturesForAddress(payer, { before: settled.transaction }).send()).map((e) => e.signature),
    ).not.toContain(settled.transaction);

    const found = await rpc
      .getTransaction(settled.transaction, { encoding: 'json', maxSupportedTransactionVersion: 0 })
      .send();
    expect(found).toMatchObject({ version: 0, meta: { err: null, status: { Ok: null } } });
    expect(found!.transaction.signatures).toEqual([settled.transaction, payerSignature(payment)]);
    expect(found!.transaction.message.accountKeys[0]).toBe(sol.feePayer.address);
    const payerBalance = (
      list: readonly { owner?: Address; mint: Address; uiTokenAmount: { amount: string } }[] | undefined,
    ) => list?.find((b) => b.owner === payer && b.mint === sol.mint)?.uiTokenAmount.amount;
    expect(
      BigInt(payerBalance(found!.meta!.preTokenBalances)!) - BigInt(payerBalance(found!.meta!.postTokenBalances)!),
    ).toBe(BigInt(entry.amount));
    await expect(rpc.getTransaction(settled.transaction, { encoding: 'json' }).send()).rejects.toThrow(
      /maxSupportedTransactionVersion/,
    );
    expect(
      await rpc
        .getTransaction(payerSignature(payment) as Signature, { encoding: 'json', maxSupportedTransactionVersion: 0 })
        .send(),
    ).toBeNull();
    expect(sol.rpc.unknownMethods).toEqual([]);
  });
});

describe("asking the Solana chain whether the agent's payment was used", () => {
  it('reads a payment as unknown, never unused, before it lands while its blockhash is valid, and used after it settled', async () => {
    const payment = await agentPayment();
    expect(await state(payment)).toEqual({
      type: 'unknown',
      why: 'the Solana transaction could still land until its blockhash expires',
    });
    expect((await settle(payment)).status).toBe(200);
    expect(await state(payment)).toEqual({ type: 'used' });
    expect(sol.rpc.calls.get('getSignaturesForAddress')).toBeGreaterThan(0);
    expect(sol.rpc.calls.get('getTransaction')).toBeGreaterThan(0);
    expect(sol.rpc.unknownMethods).toEqual([]);
  });

  it('reads a payment that landed but failed in the token program (meta.err) as unused', async () => {
    const overdrawn = await agentPayment({ ...entry, amount: '20000000' }); // the payer holds 10 tokens
    const signature = await landUnchecked(overdrawn);
    expect(sol.rpc.failed).toContain(signature);
    const landed = await createSolanaRpc(sol.rpc.url)
      .getTransaction(signature, { encoding: 'json', maxSupportedTransactionVersion: 0 })
      .send();
    expect(landed?.meta?.err).toEqual({ InstructionError: [2n, { Custom: 1n }] }); // TransferChecked: insufficient funds
    expect(await state(overdrawn)).toEqual({ type: 'unused' });
  });

  it('reads a payment whose blockhash expired without it landing as unused, and a settled one as used still', async () => {
    const settledFirst = await agentPayment();
    expect((await settle(settledFirst)).status).toBe(200);
    const neverSent = await agentPayment();
    expect(await state(neverSent)).toMatchObject({ type: 'unknown' });
    sol.ledger.svm.expireBlockhash();
    expect(await state(neverSent)).toEqual({ type: 'unused' });
    expect(await state(settledFirst)).toEqual({ type: 'used' });
  });

  it('says unknown, never unused, for a settled payment pushed out of the recent history by 25 later transactions', async () => {
    const first = await agentPayment();
    expect((await settle(first)).status).toBe(200);
    for (let i = 0; i < 25; i += 1) expect((await settle(await agentPayment())).status).toBe(200);
    sol.ledger.svm.expireBlockhash();
    expect(await state(first)).toMatchObject({ type: 'unknown' });
  }, 120_000);

  it('says unknown, never unused, when no RPC is configured or the RPC cannot be reached', async () => {
    const payment = await agentPayment();
    const withoutRpc = networks.map((n) =>
      n.id === sol.network.id ? { ...n, rpcUrl: undefined } : n,
    ) as NetworkEntry[];
    expect(await state(payment, withoutRpc)).toEqual({
      type: 'unknown',
      why: `no RPC URL is configured for ${sol.network.id} (NETWORKS_JSON rpcUrl)`,
    });
    const deadRpc = networks.map((n) => (n.id === sol.network.id ? { ...n, rpcUrl: 'http://127.0.0.1:9' } : n));
    expect(await state(payment, deadRpc)).toMatchObject({
      type: 'unknown',
      why: expect.stringMatching(/^the chain could not be asked/),
    });
  });
});
