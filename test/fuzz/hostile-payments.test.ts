/**
 * Hostile payment payloads (client-written JSON Schemas with catastrophic patterns, huge enums, deep $ref chains,
 * long ids, deep nesting, many extensions) thrown at HTTP and MCP while another request polls /healthz: each gets its
 * 4xx answer, the poll keeps answering, no handler runs and nothing settles. Nothing a client sends is compiled.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paidTools as tools } from '../../tools/index.js';
import { connectHttpClient } from '../support/mcp.js';
import { countingTools, LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { fuzzOptions } from './arbitraries.js';
import { LIMITS_OFF, totalRuns } from './support.js';

/** A hang detector, not a speed target: a catastrophic pattern would hold the event loop for minutes. */
const ANSWER_WITHIN_MS = 10_000;
const args = { payment: 100, ratePerPeriod: 0.05, periods: 10 };

let paid: PaidEnvironment;
let server: TestServer;
let mcp: Client;
let runs: Map<string, number>;
let entry: PaymentRequirements;
let declared: Record<string, { info: Record<string, unknown>; schema: unknown }>;
/** A syntactically valid EIP-3009 payment whose signature does not verify (it signs a different amount). */
let unsigned: PaymentPayload;

beforeAll(async () => {
  paid = await startPaidEnvironment(1);
  const counted = countingTools(tools);
  runs = counted.runs;
  server = await startTestServer({ ...paid.env, ...LIMITS_OFF }, { tools: counted.tools });
  mcp = await connectHttpClient(server.url);
  const challenge = decodeHeader(
    (await fetch(server.url + '/api/annuity', { method: 'POST' })).headers.get('payment-required'),
  ) as PaymentRequired;
  entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK)!;
  declared = challenge.extensions as typeof declared;
  const signedForMore = await signExactPayment(paid.payers[0]!, entry, { value: '999999' });
  unsigned = {
    ...signedForMore,
    payload: {
      ...signedForMore.payload,
      authorization: { ...(signedForMore.payload.authorization as object), value: entry.amount },
    },
  };
}, 120_000);
afterAll(async () => {
  await mcp?.close();
  await server?.close();
  await paid?.stop();
});

/** Polls /healthz until stopped; every poll must answer 200 within the hang detector's time. */
function pollHealth(): { stop: () => Promise<{ polls: number; failures: string[]; maxGapMs: number }> } {
  let running = true;
  const failures: string[] = [];
  let polls = 0;
  let maxGapMs = 0;
  const loop = (async () => {
    let last = Date.now();
    while (running) {
      try {
        const res = await fetch(server.url + '/healthz', { signal: AbortSignal.timeout(ANSWER_WITHIN_MS) });
        if (res.status !== 200) failures.push(`status ${res.status}`);
        await res.arrayBuffer();
        polls++;
      } catch (err) {
        failures.push(String((err as Error).message));
      }
      const now = Date.now();
      maxGapMs = Math.max(maxGapMs, now - last);
      last = now;
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { polls, failures, maxGapMs };
    },
  };
}

const CATASTROPHIC = ['^(a+)+$', '^(a|aa)+$', '^([a-zA-Z0-9]+)*$', '^(.*a){25}$', '^(\\w+\\s?)*$', '(x+x+)+y'];

/** A JSON Schema a hostile client might echo: nested quantifiers, huge enums, deep $ref chains, deep nesting. */
const hostileSchema: fc.Arbitrary<unknown> = fc.oneof(
  fc
    .constantFrom(...CATASTROPHIC)
    .map((pattern) => ({ type: 'object', properties: { id: { type: 'string', pattern } }, required: ['id'] })),
  fc
    .integer({ min: 10, max: 3000 })
    .map((n) => ({ type: 'string', enum: Array.from({ length: n }, (_, i) => `v${i}`) })),
  fc.integer({ min: 2, max: 300 }).map((n) => ({
    $ref: '#/$defs/d0',
    $defs: Object.fromEntries(
      Array.from({ length: n }, (_, i) => [
        `d${i}`,
        i + 1 < n ? { $ref: `#/$defs/d${i + 1}` } : { type: 'string', pattern: '^(a+)+$' },
      ]),
    ),
  })),
  fc.integer({ min: 2, max: 80 }).map((depth) => {
    let node: unknown = { type: 'string', pattern: '^(a|a)*$' };
    for (let i = 0; i < depth; i++) node = { type: 'object', properties: { x: node } };
    return node;
  }),
);

/** An id as a hostile client sends it: long runs that make backtracking explode, valid-looking or not. */
const hostileId: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ min: 10, max: 20_000 }).map((n) => 'a'.repeat(n) + '!'),
  fc.integer({ min: 16, max: 127 }).map((n) => 'a'.repeat(n) + '_'),
  // eslint-disable-next-line no-loss-of-precision -- an integer past 2^53 is the point of this case
  fc.constant(12345678901234567),
  fc.string({ maxLength: 200 }),
);

/** A payment that echoes an advertised entry and carries hostile extensions (never a valid signature). */
const hostilePayment: fc.Arbitrary<{ what: string; payment: PaymentPayload }> = fc
  .record({
    id: hostileId,
    idSchema: hostileSchema,
    bazaarSchema: fc.option(hostileSchema, { nil: undefined }),
    extraExtensions: fc.array(fc.tuple(fc.string({ minLength: 1, maxLength: 40 }), hostileSchema), { maxLength: 12 }),
  })
  .map(({ id, idSchema, bazaarSchema, extraExtensions }) => {
    const extensions: Record<string, unknown> = {
      'payment-identifier': { info: { required: false, id }, schema: idSchema },
      ...(bazaarSchema ? { bazaar: { info: declared.bazaar!.info, schema: bazaarSchema } } : {}),
    };
    for (const [name, schema] of extraExtensions) extensions[name] = { info: { id }, schema };
    const payment = { ...unsigned, extensions } as PaymentPayload;
    return {
      what: `id ${JSON.stringify(id).slice(0, 40)}…, ${Object.keys(extensions).length} extensions, ${JSON.stringify(payment).length} bytes`,
      payment,
    };
  });

async function payOverHttp(payment: PaymentPayload): Promise<number> {
  const res = await fetch(server.url + '/api/annuity', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body: JSON.stringify(args),
    signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
  });
  await res.arrayBuffer();
  return res.status;
}

async function payOverMcp(payment: PaymentPayload): Promise<{ isError: boolean; text: string }> {
  const result = await mcp.callTool(
    { name: 'annuity', arguments: args, _meta: { 'x402/payment': payment } },
    undefined,
    { timeout: ANSWER_WITHIN_MS },
  );
  return { isError: result.isError === true, text: JSON.stringify(result.content) };
}

describe('hostile payment payloads never stall the server', () => {
  it("answers the reported attack (a catastrophic pattern in the payment-identifier's schema, a long id) at once over HTTP and MCP", async () => {
    const poll = pollHealth();
    const attack = (id: string) => ({
      ...unsigned,
      extensions: {
        'payment-identifier': {
          info: { required: false, id },
          schema: { type: 'object', properties: { id: { type: 'string', pattern: '^(a+)+$' } } },
        },
      },
    });
    // Valid ids by the x402 rule that the client's pattern fails to match only after exponential backtracking ("_"):
    // our fixed rule accepts them, the schema is never run, and verification refuses the signature.
    expect(await payOverHttp(attack('a'.repeat(30) + '_') as PaymentPayload)).toBe(402);
    expect(await payOverHttp(attack('a'.repeat(127) + '_') as PaymentPayload)).toBe(402);
    const overMcp = await payOverMcp(attack('a'.repeat(100) + '-') as PaymentPayload);
    expect(overMcp.isError).toBe(true);
    expect(overMcp.text).toContain('invalid_exact_evm');
    // An id our rule refuses gets 400 naming the rule.
    expect(await payOverHttp(attack('a'.repeat(5000) + '!') as PaymentPayload)).toBe(400);
    const health = await poll.stop();
    expect(health.failures).toEqual([]);
    expect(health.polls).toBeGreaterThan(0);
    expect(totalRuns(runs)).toBe(0);
  });

  it('serves a correctly signed payment whose echo carries a hostile schema: the schema is never read, the call is paid once', async () => {
    const payment = await signExactPayment(paid.payers[0]!, entry);
    payment.extensions = {
      'payment-identifier': { info: { required: false, id: `pay_${'a'.repeat(60)}` }, schema: { pattern: '^(a+)+$' } },
      bazaar: { info: declared.bazaar!.info, schema: { $ref: '#/$defs/x', $defs: { x: { $ref: '#/$defs/x' } } } },
    };
    const before = await paid.balance(paid.payTo);
    expect(await payOverHttp(payment)).toBe(200);
    expect(await paid.balance(paid.payTo)).toBe(before + BigInt(entry.amount));
    expect(await payOverHttp(payment)).toBe(200); // same id, same request: the stored result, nothing charged again
    expect(await paid.balance(paid.payTo)).toBe(before + BigInt(entry.amount));
    runs.clear();
  });

  it('answers every generated hostile payment with a 4xx over HTTP, and as an error result over MCP, while /healthz keeps answering', async () => {
    const poll = pollHealth();
    const settledBefore = (await server.runtime.store.ledger.listReceipts({ limit: 100 })).filter(
      (r) => r.status === 'settled',
    ).length;
    await fc.assert(
      fc.asyncProperty(hostilePayment, fc.boolean(), async ({ what, payment }, overMcp) => {
        if (overMcp) {
          const result = await payOverMcp(payment);
          expect(result.isError, `MCP: ${what}`).toBe(true);
        } else {
          const status = await payOverHttp(payment);
          expect(status >= 400 && status < 500, `HTTP ${status}: ${what}`).toBe(true);
        }
      }),
      fuzzOptions(120),
    );
    const health = await poll.stop();
    expect(health.failures).toEqual([]);
    expect(health.polls).toBeGreaterThan(10);
    process.stderr.write(`hostile payments: ${health.polls} health polls, longest gap ${health.maxGapMs} ms\n`);
    expect(totalRuns(runs)).toBe(0);
    const settledAfter = (await server.runtime.store.ledger.listReceipts({ limit: 100 })).filter(
      (r) => r.status === 'settled',
    ).length;
    expect(settledAfter).toBe(settledBefore);
  }, 300_000);
});
