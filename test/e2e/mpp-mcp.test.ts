import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentRequired } from '@x402/core/types';
import { Challenge, Credential, Receipt } from 'mppx';
import { evm } from 'mppx/client';
import { McpClient } from 'mppx/mcp-sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { cardValidate } from '../../tools/card-validate.js';
import { connectHttpClient } from '../support/mcp.js';
import { decodeCredentialValue, localChallengesFirst, signCredential, tampered } from '../support/mpp.js';
import { LOCAL_NETWORK, type PaidEnvironment } from '../support/paid.js';
import { encodePayment } from '../support/payer.js';
import { startPaidServer, type PaidServer } from '../support/paid-server.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';

const SECRET = 'mpp-mcp-secret-key-of-at-least-32-bytes!!';
let paid: PaidEnvironment;
let server: TestServer;
let mcp: Client;
let runs: Map<string, number>;

const annuityArgs = { payment: 100, ratePerPeriod: 0.05, periods: 10 };
const annuityInit = (headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(annuityArgs),
});
const annuityRuns = () => runs.get('annuity') ?? 0;

let setup: PaidServer;
beforeAll(async () => {
  ({ paid, server, mcp, runs } = setup = await startPaidServer(6, {
    tools: [annuity, cardValidate] as AnyToolDefinition[],
    env: { MPP_SECRET_KEY: SECRET },
  }));
}, 120_000);
afterAll(() => setup?.stop());

/** The wire credential as the MCP binding carries it: the JSON object, `request` not encoded. */
const asMeta = (credential: string) => Credential.deserialize(credential) as unknown as Record<string, unknown>;

/** The x402 payment carrying the same authorization as an MPP credential, for the annuity route's local entry. */
async function sameAuthorizationAsX402(credential: string): Promise<Record<string, unknown>> {
  const probe = await fetch(`${server.url}/api/annuity`, { method: 'POST' });
  const entry = (decodeHeader(probe.headers.get('payment-required')) as PaymentRequired).accepts.find(
    (a) => a.network === LOCAL_NETWORK && a.scheme === 'exact',
  )!;
  const { signature, type: _type, ...authorization } = decodeCredentialValue(credential).payload;
  return { x402Version: 2, accepted: entry, payload: { signature, authorization } };
}

describe('MPP over MCP', () => {
  it('advertises the MPP challenges beside the unchanged x402 ones in the unpaid result', async () => {
    const result = await mcp.callTool({ name: 'annuity', arguments: annuityArgs });
    expect(result.isError).toBe(true);
    const x402 = result.structuredContent as unknown as PaymentRequired;
    expect(x402.x402Version).toBe(2);
    const mpp = (
      result._meta as Record<
        string,
        { httpStatus: number; challenges: Challenge.Challenge[]; problem: { type: string } }
      >
    )['org.paymentauth/payment-required']!;
    expect(mpp.httpStatus).toBe(402);
    expect(mpp.problem.type).toBe('https://paymentauth.org/problems/payment-required');
    expect(mpp.challenges.length).toBe(
      x402.accepts.filter((a) => a.network.startsWith('eip155:') && a.scheme === 'exact').length,
    );
    for (const challenge of mpp.challenges) {
      expect(challenge).toMatchObject({ method: 'evm', intent: 'charge', realm: 'localhost:4021' }); // MPP_REALM unset: the tools base URL's host
      expect(Challenge.verify(Challenge.Schema.parse(challenge), { secretKey: SECRET })).toBe(true);
    }
  });

  it('is paid by the official mppx MCP client: the tool runs once, exactly the price moves, the receipt comes in _meta', async () => {
    const payer = paid.payers[0]!;
    // The wrapper makes the client it wraps pay by itself: a connection of its own, so the other tests' calls stay unpaid.
    const own = await connectHttpClient(server.url);
    const client = McpClient.wrap(own, {
      methods: [evm.charge({ account: payer, authorization: { name: 'USDC', version: '2' } })],
      orderChallenges: localChallengesFirst,
    });
    const before = {
      payer: await paid.balance(payer.address),
      payTo: await paid.balance(paid.payTo),
      runs: annuityRuns(),
    };
    const result = await client.callTool({ name: 'annuity', arguments: annuityArgs });
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { presentValue: number }).presentValue).toBeCloseTo(772.1734929, 5);
    const receipt = (
      result._meta as Record<string, { status: string; method: string; reference: string; challengeId: string }>
    )['org.paymentauth/receipt']!;
    expect(receipt).toMatchObject({ status: 'success', method: 'evm' });
    expect(Receipt.from(receipt as unknown as Receipt.Receipt)).toMatchObject({
      status: 'success',
      reference: receipt.reference,
    });
    expect(receipt.reference).toMatch(/^0x[0-9a-f]{64}$/);
    expect(receipt.challengeId.length).toBeGreaterThan(20);
    expect((result._meta as Record<string, unknown>)['x402/payment-response']).toBeUndefined();
    expect(await paid.balance(payer.address)).toBe(before.payer - 1000n);
    expect(await paid.balance(paid.payTo)).toBe(before.payTo + 1000n);
    expect(annuityRuns()).toBe(before.runs + 1);
    const [stored] = await server.runtime.store.ledger.listReceipts({ limit: 1 });
    expect(stored).toMatchObject({
      tool: 'annuity',
      transport: 'mcp',
      protocol: 'mpp',
      transaction: receipt.reference,
    });
    await own.close();
  });

  it('accepts a credential for a challenge issued over HTTP for the same tool and price (the binding is the tool, not the transport)', async () => {
    const payer = paid.payers[1]!;
    const credential = await signCredential(payer, `${server.url}/api/annuity`, annuityInit());
    const before = await paid.balance(payer.address);
    const result = await mcp.callTool({
      name: 'annuity',
      arguments: annuityArgs,
      _meta: { 'org.paymentauth/credential': asMeta(credential) },
    });
    expect(result.isError).toBeFalsy();
    expect(await paid.balance(payer.address)).toBe(before - 1000n);
  });

  it('refuses a credential for another tool, and a tampered one, with the MPP problem and fresh challenges, running nothing', async () => {
    const payer = paid.payers[2]!;
    const before = annuityRuns();
    const forCard = await signCredential(payer, `${server.url}/api/card-validate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ number: '4242 4242 4242 4242' }),
    });
    const other = await mcp.callTool({
      name: 'annuity',
      arguments: annuityArgs,
      _meta: { 'org.paymentauth/credential': asMeta(forCard) },
    });
    expect(other.isError).toBe(true);
    const required = (
      other._meta as Record<
        string,
        { httpStatus: number; challenges: unknown[]; problem: { type: string; detail: string } }
      >
    )['org.paymentauth/payment-required']!;
    expect(required.problem.type).toBe('https://paymentauth.org/problems/invalid-challenge');
    expect(required.problem.detail).toMatch(/another tool/);
    expect(required.challenges.length).toBeGreaterThan(0);
    const own = await signCredential(payer, `${server.url}/api/annuity`, annuityInit());
    const bad = tampered(own, (w) => (w.payload.value = '1'));
    const refused = await mcp.callTool({
      name: 'annuity',
      arguments: annuityArgs,
      _meta: { 'org.paymentauth/credential': asMeta(bad) },
    });
    expect(refused.isError).toBe(true);
    expect(JSON.parse((refused.content as Array<{ text: string }>)[0]!.text)).toMatchObject({
      type: 'https://paymentauth.org/problems/verification-failed',
      reason: 'mpp_amount_mismatch',
    });
    expect(annuityRuns()).toBe(before);
  });

  it('refuses a call carrying both an MPP credential and an x402 payment, running nothing', async () => {
    const credential = await signCredential(paid.payers[2]!, `${server.url}/api/annuity`, annuityInit());
    const before = annuityRuns();
    const result = await mcp.callTool({
      name: 'annuity',
      arguments: annuityArgs,
      _meta: {
        'org.paymentauth/credential': asMeta(credential),
        'x402/payment': await sameAuthorizationAsX402(credential),
      },
    });
    expect(result.isError).toBe(true);
    expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toMatchObject({
      status: 400,
      reason: 'mpp_and_x402_together',
    });
    expect(annuityRuns()).toBe(before);
  });
});

describe('one EIP-3009 authorization sent one after the other through both protocols and both transports', () => {
  it('runs and settles once: MPP over MCP first, then x402 over HTTP and MCP are refused, and the same MPP credential over HTTP only collects the stored result', async () => {
    const payer = paid.payers[4]!;
    const credential = await signCredential(payer, `${server.url}/api/annuity`, annuityInit());
    const x402 = await sameAuthorizationAsX402(credential);
    const before = { runs: annuityRuns(), payer: await paid.balance(payer.address) };
    const first = await mcp.callTool({
      name: 'annuity',
      arguments: annuityArgs,
      _meta: { 'org.paymentauth/credential': asMeta(credential) },
    });
    expect(first.isError).toBeFalsy();
    const x402Http = await fetch(
      `${server.url}/api/annuity`,
      annuityInit({ 'payment-signature': encodePayment(x402) }),
    );
    expect(x402Http.status).toBe(402);
    expect(((await x402Http.json()) as { error: string }).error).toBe('payment_already_used');
    const x402Mcp = await mcp.callTool({ name: 'annuity', arguments: annuityArgs, _meta: { 'x402/payment': x402 } });
    expect(x402Mcp.isError).toBe(true);
    const again = await fetch(`${server.url}/api/annuity`, annuityInit({ authorization: credential }));
    expect(again.status).toBe(200);
    expect(((await again.json()) as { presentValue: number }).presentValue).toBeCloseTo(772.1734929, 5);
    expect(annuityRuns()).toBe(before.runs + 1);
    expect(await paid.balance(payer.address)).toBe(before.payer - 1000n);
  });
});

describe('one EIP-3009 authorization sent 20 times at once, through both protocols and both transports', () => {
  it('buys exactly one execution and one settlement', async () => {
    const payer = paid.payers[3]!;
    const credential = await signCredential(payer, `${server.url}/api/annuity`, annuityInit());
    const x402 = await sameAuthorizationAsX402(credential);
    const before = {
      runs: annuityRuns(),
      payer: await paid.balance(payer.address),
      payTo: await paid.balance(paid.payTo),
    };
    const clients = await Promise.all(Array.from({ length: 4 }, () => connectHttpClient(server.url)));
    const ok = (status: number) => status === 200;
    const attempts = Array.from({ length: 20 }, (_, i): Promise<boolean> => {
      switch (i % 4) {
        case 0:
          return fetch(`${server.url}/api/annuity`, annuityInit({ authorization: credential })).then((r) =>
            ok(r.status),
          );
        case 1:
          return fetch(`${server.url}/api/annuity`, annuityInit({ 'payment-signature': encodePayment(x402) })).then(
            (r) => ok(r.status),
          );
        case 2:
          return clients[i % 4]!.callTool({
            name: 'annuity',
            arguments: annuityArgs,
            _meta: { 'org.paymentauth/credential': asMeta(credential) },
          }).then((r) => !r.isError);
        default:
          return clients[i % 4]!.callTool({
            name: 'annuity',
            arguments: annuityArgs,
            _meta: { 'x402/payment': x402 },
          }).then((r) => !r.isError);
      }
    });
    const outcomes = await Promise.all(attempts);
    await Promise.all(clients.map((c) => c.close()));
    // A retry of the same MPP credential for the same request may collect the stored result (idempotent), never a second run.
    expect(outcomes.filter(Boolean).length).toBeGreaterThanOrEqual(1);
    expect(annuityRuns()).toBe(before.runs + 1);
    expect(await paid.balance(payer.address)).toBe(before.payer - 1000n);
    expect(await paid.balance(paid.payTo)).toBe(before.payTo + 1000n);
    const settled = (await server.runtime.store.ledger.listReceipts({ limit: 50 })).filter(
      (r) => r.payer === payer.address && r.status === 'settled',
    );
    expect(settled).toHaveLength(1);
  });
});

describe('MPP turned off (MPP=off) over MCP', () => {
  it('advertises no MPP challenge and refuses an MPP credential with a clear error, running nothing', async () => {
    const off = await startTestServer({ ...paid.env, MPP: 'off' }, { tools: [annuity] as AnyToolDefinition[] });
    const client = await connectHttpClient(off.url);
    try {
      const unpaid = await client.callTool({ name: 'annuity', arguments: annuityArgs });
      expect(unpaid.isError).toBe(true);
      expect((unpaid._meta ?? {})['org.paymentauth/payment-required']).toBeUndefined();
      const credential = await signCredential(paid.payers[5]!, `${server.url}/api/annuity`, annuityInit());
      const refused = await client.callTool({
        name: 'annuity',
        arguments: annuityArgs,
        _meta: { 'org.paymentauth/credential': asMeta(credential) },
      });
      expect(refused.isError).toBe(true);
      expect(JSON.parse((refused.content as Array<{ text: string }>)[0]!.text)).toMatchObject({
        status: 400,
        reason: 'mpp_disabled',
      });
    } finally {
      await client.close();
      await off.close();
    }
  });
});
