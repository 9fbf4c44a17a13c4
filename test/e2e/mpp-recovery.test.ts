import { Challenge } from 'mppx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { mppClient, signCredential } from '../support/mpp.js';
import { countingTools, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { startTestServer, type TestServer } from '../support/server.js';

const SECRET = 'mpp-recovery-secret-key-of-32-bytes-or-more';
let paid: PaidEnvironment;
let server: TestServer;
let runs: Map<string, number>;

beforeAll(async () => {
  paid = await startPaidEnvironment(3);
  const counted = countingTools([annuity] as AnyToolDefinition[]);
  runs = counted.runs;
  server = await startTestServer({ ...paid.env, MPP_SECRET_KEY: SECRET }, { tools: counted.tools });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await paid?.stop();
});

const url = () => `${server.url}/api/annuity`;
const post = (periods: number, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods }),
});
const annuityRuns = () => runs.get('annuity') ?? 0;

/** A refusal of an MPP credential, as the draft has it: 402, the MPP problem, and fresh challenges to pay. */
async function expectFreshChallenge(res: Response, type: string) {
  expect(res.status).toBe(402);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(((await res.json()) as { type: string }).type).toBe(`https://paymentauth.org/problems/${type}`);
  expect(Challenge.fromResponseList(res).length).toBeGreaterThan(0);
}

describe('an MPP client that sent a credential the server refuses', () => {
  it('gets 402 with fresh challenges for a malformed credential, not a 400 it cannot act on', async () => {
    const res = await fetch(url(), post(10, { authorization: 'Payment !!!not-base64url!!!' }));
    await expectFreshChallenge(res, 'malformed-credential');
  });

  it('gets 402 with fresh challenges for a credential already used for another request, not a 409', async () => {
    const credential = await signCredential(paid.payers[0]!, url(), post(10));
    expect((await fetch(url(), post(10, { authorization: credential }))).status).toBe(200);
    const before = annuityRuns();
    const res = await fetch(url(), post(11, { authorization: credential }));
    expect(((await res.clone().json()) as { reason: string }).reason).toBe('payment_identifier_conflict');
    await expectFreshChallenge(res, 'invalid-challenge');
    expect(annuityRuns()).toBe(before);
  });

  it("recovers with mppx's own client from a malformed credential: it pays a fresh challenge once and gets 200", async () => {
    const payer = paid.payers[1]!;
    const before = { balance: await paid.balance(payer.address), runs: annuityRuns() };
    const res = await mppClient(payer).fetch(url(), post(12, { authorization: 'Payment !!!not-base64url!!!' }));
    expect(res.status).toBe(200);
    expect(res.headers.get('payment-receipt')).not.toBeNull();
    expect(annuityRuns()).toBe(before.runs + 1);
    expect(await paid.balance(payer.address)).toBe(before.balance - 1000n);
  });

  it("recovers with mppx's own client from a stale credential for another request: one new payment, 200", async () => {
    const payer = paid.payers[2]!;
    const stale = await signCredential(payer, url(), post(13));
    expect((await fetch(url(), post(13, { authorization: stale }))).status).toBe(200);
    const before = { balance: await paid.balance(payer.address), runs: annuityRuns() };
    const res = await mppClient(payer).fetch(url(), post(14, { authorization: stale }));
    expect(res.status).toBe(200);
    expect(annuityRuns()).toBe(before.runs + 1);
    expect(await paid.balance(payer.address)).toBe(before.balance - 1000n);
  });
});
