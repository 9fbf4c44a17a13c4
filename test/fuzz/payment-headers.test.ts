import { parse as parseQuery } from 'node:querystring';
import type { PaymentRequired } from '@x402/core/types';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { paidTools as tools } from '../../tools/index.js';
import { countingTools, LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { signExactPayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { arbitraryFor, fuzzOptions, inputSchemaOf } from './arbitraries.js';
import { hostilePaymentHeader, nearMissPayment } from './payments.js';
import { expectChallenge, expectNoServerError, jsonOf, LIMITS_OFF, totalRuns } from './support.js';

let paid: PaidEnvironment;
let server: TestServer;
let runs: Map<string, number>;
let signed: Record<string, unknown>;
let payerBefore: bigint;

/** A request each route accepts as input (a query for GET routes), so the payment header is what decides. */
interface Target {
  name: string;
  /** The payment header of the route's x402 version. */
  header: 'payment-signature' | 'x-payment';
  method: string;
  path: string;
  query: string;
  body: string | undefined;
}
const targets: Target[] = [];
const sameEntry: Target[] = [];

function queryOf(value: Record<string, unknown>): string {
  return new URLSearchParams(
    Object.entries(value).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : (JSON.stringify(v) ?? '')]),
  ).toString();
}

/** The first input the schema generator yields that the tool accepts (GET: after the round trip through a query string). */
function validTarget(tool: AnyToolDefinition): Target | undefined {
  const header = tool.group === 'transfers' ? 'x-payment' : 'payment-signature';
  for (const candidate of fc.sample(arbitraryFor(inputSchemaOf(tool.input)), { numRuns: 400, seed: 7 })) {
    if (typeof candidate !== 'object' || candidate === null || Array.isArray(candidate)) continue;
    if (tool.method === 'GET') {
      const query = queryOf(candidate as Record<string, unknown>);
      if (query && tool.input.safeParse(parseQuery(query)).success)
        return { name: tool.name, header, method: tool.method, path: tool.path, query, body: undefined };
    } else if (tool.input.safeParse(candidate).success)
      return {
        name: tool.name,
        header,
        method: tool.method,
        path: tool.path,
        query: '',
        body: JSON.stringify(candidate),
      };
  }
  return undefined;
}

beforeAll(async () => {
  paid = await startPaidEnvironment(1);
  const counted = countingTools(tools);
  runs = counted.runs;
  server = await startTestServer({ ...paid.env, ...LIMITS_OFF }, { tools: counted.tools });
  // Tools whose precheck asks an upstream before the payment is read are left out: here the header must decide.
  const probe = await fetch(server.url + '/api/annuity', { method: 'POST' });
  const entry = (decodeHeader(probe.headers.get('payment-required')) as PaymentRequired).accepts.find(
    (a) => a.network === LOCAL_NETWORK,
  )!;
  signed = (await signExactPayment(paid.payers[0]!, entry)) as unknown as Record<string, unknown>;
  for (const tool of tools.filter((t) => !t.precheck) as AnyToolDefinition[]) {
    const target = validTarget(tool);
    if (!target) continue;
    targets.push(target);
    // Routes that advertise the very entry the payment was signed for: there a near miss gets past matching to verification.
    const challenge = await fetch(server.url + tool.path, { method: tool.method });
    const accepts = ((await challenge.json()) as PaymentRequired).accepts;
    if (accepts.some((a) => JSON.stringify(a) === JSON.stringify(entry))) sameEntry.push(target);
  }
  payerBefore = await paid.balance(paid.payers[0]!.address);
}, 120_000);
afterAll(async () => {
  await server?.close();
  await paid?.stop();
});

describe('fuzzing the payment headers (random, near-miss and oversize payments never buy a call)', () => {
  it('has a valid input for most paid routes, the v1 route among them', () => {
    expect(targets.length).toBeGreaterThanOrEqual(10);
    expect(targets.some((t) => tools.find((tool) => tool.name === t.name)?.group === 'transfers')).toBe(true);
    expect(sameEntry.length).toBeGreaterThan(0);
  });

  it('answers every invalid payment in either header with a 4xx (400 malformed, 402 refused), never runs a handler and never settles', async () => {
    const cases = fc.record({
      target: fc.oneof(fc.constantFrom(...targets), fc.constantFrom(...sameEntry)),
      wrongHeader: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      payment: hostilePaymentHeader(nearMissPayment(signed)),
    });
    await fc.assert(
      fc.asyncProperty(cases, async ({ target, wrongHeader, payment }) => {
        const { method, path, query, body } = target;
        const header = wrongHeader
          ? target.header === 'x-payment'
            ? 'payment-signature'
            : 'x-payment'
          : target.header;
        const res = await fetch(`${server.url}${path}${query ? '?' + query : ''}`, {
          method,
          headers: { [header]: payment.value, ...(body ? { 'content-type': 'application/json' } : {}) },
          ...(body ? { body } : {}),
        });
        const what = `${method} ${path} with ${header}: ${payment.kind} ${payment.value.slice(0, 160)}`;
        expectNoServerError(res.status, path, what);
        expect(res.status, what).toBeGreaterThanOrEqual(400);
        const answer = await jsonOf(res);
        if (res.status === 402) expectChallenge(answer, what);
        expect(totalRuns(runs), what).toBe(0);
      }),
      fuzzOptions(200),
    );
    expect(
      (await server.runtime.store.ledger.listReceipts({ limit: 10 })).filter((r) => r.status === 'settled'),
    ).toEqual([]);
    expect(await paid.balance(paid.payers[0]!.address)).toBe(payerBefore);
  });
});
