import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { toClientAvmSigner } from '@x402/avm';
import { ExactAvmScheme } from '@x402/avm/exact/client';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { startAlgorandEnvironment, type AlgorandEnvironment } from '../support/chain/algorand.js';
import { buildAlgorandPayment, corruptedSignature, officialAlgorandPayment } from '../support/chain/algorand-payer.js';
import { connectHttpClient } from '../support/mcp.js';
import { countingTools } from '../support/paid.js';
import { encodePayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { expectWindowRefused, watchPaymentPath } from '../support/window.js';

let algo: AlgorandEnvironment;
let server: TestServer;
let mcp: Client;
let runs: Map<string, number>;
const input = { payment: 100, ratePerPeriod: 0.05, periods: 10 };
const body = JSON.stringify(input);

beforeAll(async () => {
  algo = await startAlgorandEnvironment(6);
  const counted = countingTools([annuity] as AnyToolDefinition[]);
  runs = counted.runs;
  server = await startTestServer(algo.env, { tools: counted.tools });
  mcp = await connectHttpClient(server.url);
}, 120_000);
afterAll(async () => {
  await mcp?.close();
  await server?.close();
  await algo?.stop();
});

async function challenge(): Promise<PaymentRequired> {
  const res = await fetch(server.url + '/api/annuity', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  expect(res.status).toBe(402);
  return decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
}

const entryOf = (c: PaymentRequired) => c.accepts.find((a) => a.network === algo.network) as PaymentRequirements;
const payOfficially = async (i: number) =>
  officialAlgorandPayment(algo.payers[i]!, await challenge(), algo.network, algo.algod.url);
const post = (payment: PaymentPayload) =>
  fetch(server.url + '/api/annuity', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body,
  });
const ran = () => runs.get('annuity') ?? 0;

describe('paying Tollbooth on Algorand with the official @x402/avm client', () => {
  it('advertises the Algorand entry with our fee payer and the tollbooth tag', async () => {
    expect(entryOf(await challenge())).toMatchObject({
      scheme: 'exact',
      asset: algo.assetId.toString(),
      amount: '1000',
      payTo: algo.payTo,
      extra: { feePayer: algo.feePayer.addr.toString(), tag: 'tollbooth' },
    });
  });

  it('pays over HTTP through @x402/fetch: the tool runs once, the receipt names the txid and the ASA moves', async () => {
    const payer = algo.payers[0]!;
    const client = new x402Client((_v, reqs) => reqs.find((r) => r.network === algo.network)!);
    client.setSpendControls({ allowedAssets: true });
    client.register(
      'algorand:*',
      new ExactAvmScheme(toClientAvmSigner(Buffer.from(payer.sk).toString('base64')), {
        algodUrl: algo.algod.url,
      }) as never,
    );
    const before = { payer: algo.balance(payer.addr.toString()), payTo: algo.balance(algo.payTo), runs: ran() };
    const res = await wrapFetchWithPayment(fetch, client)(server.url + '/api/annuity', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { presentValue: number }).presentValue).toBeCloseTo(772.1734929, 5);
    const receipt = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!);
    expect(receipt).toMatchObject({ success: true, network: algo.network, payer: payer.addr.toString() });
    expect(algo.ledger.confirmed.get(receipt.transaction)?.stxn.txn.assetTransfer?.receiver.toString()).toBe(
      algo.payTo,
    );
    expect(algo.balance(payer.addr.toString())).toBe(before.payer - 1000n);
    expect(algo.balance(algo.payTo)).toBe(before.payTo + 1000n);
    expect(ran()).toBe(before.runs + 1);
    const [stored] = await server.runtime.store.ledger.listReceipts({ limit: 1 });
    expect(stored).toMatchObject({
      tool: 'annuity',
      status: 'settled',
      network: algo.network,
      transaction: receipt.transaction,
      amount: '1000',
    });
  });

  it('pays over MCP (streamable HTTP) with the payment in _meta and returns the receipt in _meta', async () => {
    const before = { payTo: algo.balance(algo.payTo), runs: ran() };
    const result = await mcp.callTool({
      name: 'annuity',
      arguments: input,
      _meta: { 'x402/payment': await payOfficially(1) },
    });
    expect(result.isError).toBeFalsy();
    expect(result._meta?.['x402/payment-response']).toMatchObject({
      success: true,
      network: algo.network,
      transaction: expect.stringMatching(/^[A-Z2-7]{52}$/),
    });
    expect(algo.balance(algo.payTo)).toBe(before.payTo + 1000n);
    expect(ran()).toBe(before.runs + 1);
  });
});

describe('tampered and replayed Algorand payments never run the tool', () => {
  it('refuses over HTTP a group that asks our fee payer to sign twice, with the reason', async () => {
    const before = { runs: ran(), submitted: algo.ledger.accepted.length };
    const res = await post(
      buildAlgorandPayment(algo.ledger, algo.payers[2]!, entryOf(await challenge()), { extraFeePayerTxn: true }),
    );
    expect(res.status).toBe(402);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_exact_avm_invalid_fee_payer');
    expect(ran()).toBe(before.runs);
    expect(algo.ledger.accepted.length).toBe(before.submitted);
  });

  it('refuses over MCP a payment whose signature was corrupted, with the reason', async () => {
    const before = ran();
    const result = await mcp.callTool({
      name: 'annuity',
      arguments: input,
      _meta: { 'x402/payment': corruptedSignature(await payOfficially(2)) },
    });
    expect(result.isError).toBe(true);
    expect((result.structuredContent as { error: string }).error).toBe('invalid_exact_avm_invalid_signature');
    expect(ran()).toBe(before);
  });

  it('refuses a payment whose accepted entry changed the tag: the echo must match what was advertised', async () => {
    const payment = await payOfficially(2);
    const before = ran();
    const res = await post({
      ...payment,
      accepted: { ...payment.accepted, extra: { ...payment.accepted.extra, tag: 'someone-else' } },
    });
    expect(res.status).toBe(402);
    expect(((await res.json()) as { error: string }).error).toBe('no_matching_payment_requirements');
    expect(ran()).toBe(before);
  });

  it('refuses the same payment sent again over HTTP and over MCP: one execution, one settlement', async () => {
    const payment = await payOfficially(3);
    const before = { runs: ran(), payTo: algo.balance(algo.payTo) };
    expect((await post(payment)).status).toBe(200);
    const again = await post(payment);
    expect(again.status).toBe(402);
    expect(((await again.json()) as { error: string }).error).toBe('payment_already_used');
    const viaMcp = await mcp.callTool({ name: 'annuity', arguments: input, _meta: { 'x402/payment': payment } });
    expect((viaMcp.structuredContent as { error: string }).error).toBe('payment_already_used');
    expect(ran()).toBe(before.runs + 1);
    expect(algo.balance(algo.payTo)).toBe(before.payTo + 1000n);
  });

  it('lets 5 concurrent copies of one payment buy exactly one execution and one settlement', async () => {
    const payment = await payOfficially(4);
    const before = { runs: ran(), payTo: algo.balance(algo.payTo), submitted: algo.ledger.accepted.length };
    const responses = await Promise.all(Array.from({ length: 5 }, () => post(payment)));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    const reasonOf = async (r: Response) => {
      const error = ((await r.json()) as { error: string | { code: string } }).error;
      return typeof error === 'string' ? error : error.code;
    };
    const refusals = await Promise.all(
      responses.filter((r) => r.status !== 200).map(async (r) => [r.status, await reasonOf(r)]),
    );
    for (const [status, reason] of refusals)
      expect([
        [409, 'payment_in_flight'],
        [402, 'payment_already_used'],
      ]).toContainEqual([status, reason]);
    expect(ran()).toBe(before.runs + 1);
    expect(algo.balance(algo.payTo)).toBe(before.payTo + 1000n);
    expect(algo.ledger.accepted.length).toBe(before.submitted + 1);
  });

  it('answers 503 while algod has not confirmed the group, then gives the same payment its output once, without running again', async () => {
    const payment = await payOfficially(5);
    const before = { runs: ran(), payTo: algo.balance(algo.payTo) };
    algo.ledger.holding = true;
    try {
      const first = await post(payment);
      expect(first.status).toBe(503);
      expect(decodePaymentResponseHeader(first.headers.get('PAYMENT-RESPONSE')!)).toMatchObject({
        success: false,
        errorReason: 'settlement_pending',
        transaction: expect.stringMatching(/^[A-Z2-7]{52}$/),
      });
      expect(algo.balance(algo.payTo)).toBe(before.payTo);
    } finally {
      algo.ledger.releaseHeld();
    }
    const retried = await post(payment);
    expect(retried.status).toBe(200);
    expect(((await retried.json()) as { presentValue: number }).presentValue).toBeCloseTo(772.1734929, 5);
    expect(decodePaymentResponseHeader(retried.headers.get('PAYMENT-RESPONSE')!)).toMatchObject({
      success: true,
      network: algo.network,
    });
    expect(ran()).toBe(before.runs + 1);
    expect(algo.balance(algo.payTo)).toBe(before.payTo + 1000n);
  });

  it('refuses a group valid for 1000 rounds (the protocol maximum) or until round 2^64−1 before claiming or verifying it', async () => {
    const watch = watchPaymentPath(server.runtime);
    const before = { runs: ran(), payTo: algo.balance(algo.payTo), ...watch };
    const entry = entryOf(await challenge());
    for (const lastValid of [algo.ledger.round + 1000n, 2n ** 64n - 1n]) {
      const long = buildAlgorandPayment(algo.ledger, algo.payers[1]!, entry, { lastValid });
      await expectWindowRefused(await post(long), 300);
    }
    expect({ ...watch }).toEqual({ claims: before.claims, verifies: before.verifies });
    // The official client's 10 rounds, and our own build's, are within the window.
    expect((await post(await payOfficially(1))).status).toBe(200);
    expect((await post(buildAlgorandPayment(algo.ledger, algo.payers[1]!, entry))).status).toBe(200);
    expect({ ...watch }).toEqual({ claims: before.claims + 2, verifies: before.verifies + 2 });
    expect(ran()).toBe(before.runs + 2);
    expect(algo.balance(algo.payTo)).toBe(before.payTo + 2000n);
  });
});
