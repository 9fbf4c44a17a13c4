import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { decodePaymentResponseHeader, wrapFetchWithPayment } from '@x402/fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import {
  officialStellarClient,
  officialStellarPayment,
  payStellar,
  startStellarEnvironment,
  throughLookAlike,
  type StellarEnvironment,
} from '../support/chain/stellar.js';
import { connectHttpClient } from '../support/mcp.js';
import { countingTools } from '../support/paid.js';
import { encodePayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { payloadInvocation, resignEntry, withAuthEntries } from '../support/chain/stellar-tamper.js';
import { expectWindowRefused, TEN_YEARS_SECONDS, watchPaymentPath } from '../support/window.js';

let stellar: StellarEnvironment;
let server: TestServer;
let mcp: Client;
let runs: Map<string, number>;
const input = { payment: 100, ratePerPeriod: 0.05, periods: 10 };
const body = JSON.stringify(input);
/** The annuity's Stellar price: 0.001 USDC in 7-decimal units. */
const PRICE = 10_000n;

beforeAll(async () => {
  stellar = await startStellarEnvironment({ payers: 6 });
  const counted = countingTools([annuity] as AnyToolDefinition[]);
  runs = counted.runs;
  // A short settle timeout lets the "outcome not known yet" test answer quickly.
  server = await startTestServer({ ...stellar.env, FACILITATOR_SETTLE_TIMEOUT_MS: '3000' }, { tools: counted.tools });
  mcp = await connectHttpClient(server.url);
}, 120_000);
afterAll(async () => {
  await mcp?.close();
  await server?.close();
  await stellar?.stop();
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

const entryOf = (c: PaymentRequired) => c.accepts.find((a) => a.network === stellar.network) as PaymentRequirements;
const payOfficially = async (i: number) => officialStellarPayment(stellar, stellar.payers[i]!, await challenge());
const post = (payment: PaymentPayload) =>
  fetch(server.url + '/api/annuity', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body,
  });
const ran = () => runs.get('annuity') ?? 0;
const submitted = () => stellar.rpc.calls.get('sendTransaction') ?? 0;
const payTo = () => stellar.balance(stellar.payTo.publicKey());
/** The refusal reason of an MCP error result: a payment refusal carries the challenge, other errors `{ error: { code } }` as text. */
function mcpReason(result: Awaited<ReturnType<Client['callTool']>>): string {
  const structured = result.structuredContent as { error?: string } | undefined;
  if (typeof structured?.error === 'string') return structured.error;
  const [first] = result.content as { type: string; text: string }[];
  return (JSON.parse(first!.text) as { error: { code: string } }).error.code;
}

describe('paying Tollbooth on Stellar with the official @x402/stellar client', () => {
  it('advertises the Stellar entry: the asset contract, the 7-decimal Stellar price, sponsored fees', async () => {
    expect(entryOf(await challenge())).toEqual({
      scheme: 'exact',
      network: stellar.network,
      asset: stellar.usdc.contract,
      amount: PRICE.toString(),
      payTo: stellar.payTo.publicKey(),
      maxTimeoutSeconds: 300,
      extra: { areFeesSponsored: true },
    });
  });

  it('pays over HTTP through @x402/fetch: the tool runs once, PAYMENT-RESPONSE names the transaction and USDC moves', async () => {
    const payer = stellar.payers[0]!.publicKey();
    const before = { payer: stellar.balance(payer), payTo: payTo(), runs: ran() };
    const paidFetch = wrapFetchWithPayment(fetch, officialStellarClient(stellar, stellar.payers[0]!));
    const res = await throughLookAlike(stellar, () =>
      paidFetch(server.url + '/api/annuity', { method: 'POST', headers: { 'content-type': 'application/json' }, body }),
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as { presentValue: number }).presentValue).toBeCloseTo(772.1734929, 5);
    const receipt = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!);
    expect(receipt).toMatchObject({
      success: true,
      network: stellar.network,
      payer,
      transaction: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(stellar.rpc.included).toContain(receipt.transaction);
    expect(stellar.balance(payer)).toBe(before.payer - PRICE);
    expect(payTo()).toBe(before.payTo + PRICE);
    expect(ran()).toBe(before.runs + 1);
    const [stored] = await server.runtime.store.ledger.listReceipts({ limit: 1 });
    expect(stored).toMatchObject({
      tool: 'annuity',
      status: 'settled',
      network: stellar.network,
      payer,
      transaction: receipt.transaction,
      amount: PRICE.toString(),
    });
    expect(stellar.rpc.refusals).toEqual([]);
  });

  it('pays over MCP (streamable HTTP) with the payment in _meta and returns the receipt in _meta', async () => {
    const unpaid = await mcp.callTool({ name: 'annuity', arguments: input });
    expect(unpaid.isError).toBe(true);
    const before = { payTo: payTo(), runs: ran() };
    const payment = await officialStellarPayment(
      stellar,
      stellar.payers[1]!,
      unpaid.structuredContent as unknown as PaymentRequired,
    );
    const result = await mcp.callTool({ name: 'annuity', arguments: input, _meta: { 'x402/payment': payment } });
    expect(result.isError).toBeFalsy();
    expect(result._meta?.['x402/payment-response']).toMatchObject({
      success: true,
      network: stellar.network,
      transaction: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(payTo()).toBe(before.payTo + PRICE);
    expect(ran()).toBe(before.runs + 1);
  });
});

describe('tampered and replayed Stellar payments never run the tool', () => {
  it('refuses over HTTP a payment signed for less than the price, with the reason, and submits nothing', async () => {
    const before = { runs: ran(), submitted: submitted() };
    const res = await post(
      await payStellar(stellar, stellar.payers[2]!, entryOf(await challenge()), { amount: (PRICE - 1n).toString() }),
    );
    expect(res.status).toBe(402);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_exact_stellar_payload_wrong_amount');
    expect(ran()).toBe(before.runs);
    expect(submitted()).toBe(before.submitted);
  });

  it('refuses over MCP a payment that pays someone else, with the reason', async () => {
    const before = ran();
    const payment = await payStellar(stellar, stellar.payers[2]!, entryOf(await challenge()), {
      payTo: stellar.payers[5]!.publicKey(),
    });
    const result = await mcp.callTool({ name: 'annuity', arguments: input, _meta: { 'x402/payment': payment } });
    expect(result.isError).toBe(true);
    expect(mcpReason(result)).toBe('invalid_exact_stellar_payload_wrong_recipient');
    expect(ran()).toBe(before);
  });

  it('refuses the same payment sent again over HTTP and over MCP: one execution, one settlement', async () => {
    const payment = await payOfficially(3);
    const before = { runs: ran(), payTo: payTo() };
    expect((await post(payment)).status).toBe(200);
    const again = await post(payment);
    expect(again.status).toBe(402);
    expect(((await again.json()) as { error: string }).error).toBe('payment_already_used');
    const viaMcp = await mcp.callTool({ name: 'annuity', arguments: input, _meta: { 'x402/payment': payment } });
    expect(mcpReason(viaMcp)).toBe('payment_already_used');
    expect(ran()).toBe(before.runs + 1);
    expect(payTo()).toBe(before.payTo + PRICE);
  });

  it('lets 5 concurrent copies of one payment (3 over HTTP, 2 over MCP) buy exactly one execution and one settlement', async () => {
    const payment = await payOfficially(4);
    const before = { runs: ran(), payTo: payTo(), included: stellar.rpc.included.length };
    const viaHttp = async () => {
      const res = await post(payment);
      const error = res.status === 200 ? undefined : ((await res.json()) as { error: string | { code: string } }).error;
      return { ok: res.status === 200, reason: typeof error === 'string' ? error : error?.code };
    };
    const viaMcp = async () => {
      const result = await mcp.callTool({ name: 'annuity', arguments: input, _meta: { 'x402/payment': payment } });
      return { ok: !result.isError, reason: result.isError ? mcpReason(result) : undefined };
    };
    const outcomes = await Promise.all([viaHttp(), viaMcp(), viaHttp(), viaMcp(), viaHttp()]);
    expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
    for (const o of outcomes.filter((x) => !x.ok))
      expect(['payment_in_flight', 'payment_already_used']).toContain(o.reason);
    expect(ran()).toBe(before.runs + 1);
    expect(payTo()).toBe(before.payTo + PRICE);
    expect(stellar.rpc.included.length).toBe(before.included + 1);
  });

  it('answers 503 while the settlement has not landed, then gives the same payment its output once, without running again', async () => {
    const payment = await payOfficially(5);
    const before = { runs: ran(), payTo: payTo(), submitted: submitted() };
    stellar.rpc.hold = true;
    try {
      const first = await post(payment);
      expect(first.status).toBe(503);
      expect(decodePaymentResponseHeader(first.headers.get('PAYMENT-RESPONSE')!)).toMatchObject({
        success: false,
        errorReason: 'settlement_pending',
        transaction: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      expect(payTo()).toBe(before.payTo);
    } finally {
      stellar.rpc.release();
    }
    const retried = await post(payment);
    expect(retried.status).toBe(200);
    expect(((await retried.json()) as { presentValue: number }).presentValue).toBeCloseTo(772.1734929, 5);
    expect(decodePaymentResponseHeader(retried.headers.get('PAYMENT-RESPONSE')!)).toMatchObject({
      success: true,
      network: stellar.network,
    });
    expect(ran()).toBe(before.runs + 1);
    expect(payTo()).toBe(before.payTo + PRICE);
    // The core retries a pending settlement once and the reconciler asks again: still one transaction submitted.
    expect(submitted()).toBe(before.submitted + 1);
  });

  it('refuses an authorization expiring ten years or 2^32−1 ledgers ahead before claiming or verifying it', async () => {
    const payer = stellar.payers[2]!;
    const watch = watchPaymentPath(server.runtime);
    const before = { runs: ran(), payTo: payTo(), submitted: submitted(), ...watch };
    const entry = entryOf(await challenge());
    // The official client signs the current ledger + maxTimeoutSeconds / 5 s: asked for ten years, it signs ten years.
    const tenYears = await payStellar(stellar, payer, entry, { maxTimeoutSeconds: Number(TEN_YEARS_SECONDS) });
    const official = await payStellar(stellar, payer, entry);
    const [auth] = payloadInvocation(official, stellar.passphrase).auth;
    const lastLedger = withAuthEntries(official, stellar.passphrase, [
      await resignEntry(auth!, payer, stellar.passphrase, 2 ** 32 - 1),
    ]);
    for (const payment of [tenYears, lastLedger]) await expectWindowRefused(await post(payment), 300);
    expect({ ...watch }).toEqual({ claims: before.claims, verifies: before.verifies });
    expect((await post(official)).status).toBe(200);
    expect({ ...watch }).toEqual({ claims: before.claims + 1, verifies: before.verifies + 1 });
    expect({ runs: ran(), payTo: payTo(), submitted: submitted() }).toEqual({
      runs: before.runs + 1,
      payTo: before.payTo + PRICE,
      submitted: before.submitted + 1,
    });
  });
});

describe('Stellar on stellar:pubnet, the specification’s network, with its entry overridden to a look-alike RPC', () => {
  let pubnet: StellarEnvironment;
  let pubnetServer: TestServer;
  beforeAll(async () => {
    pubnet = await startStellarEnvironment({ payers: 1, network: 'stellar:pubnet' });
    pubnetServer = await startTestServer(pubnet.env, { tools: [annuity] as AnyToolDefinition[] });
  }, 120_000);
  afterAll(async () => {
    await pubnetServer?.close();
    await pubnet?.stop();
  });

  it('advertises the overridden asset on stellar:pubnet and settles the official client’s payment there', async () => {
    const unpaid = await fetch(pubnetServer.url + '/api/annuity', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const offer = decodeHeader(unpaid.headers.get('payment-required')) as PaymentRequired;
    expect(offer.accepts.filter((a) => a.network.startsWith('stellar:'))).toEqual([
      expect.objectContaining({ network: 'stellar:pubnet', asset: pubnet.usdc.contract, amount: PRICE.toString() }),
    ]);
    const payment = await officialStellarPayment(pubnet, pubnet.payers[0]!, offer);
    const res = await fetch(pubnetServer.url + '/api/annuity', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
      body,
    });
    expect(res.status).toBe(200);
    expect(decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!)).toMatchObject({
      success: true,
      network: 'stellar:pubnet',
    });
    expect(pubnet.balance(pubnet.payTo.publicKey())).toBe(PRICE);
  });
});
