import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { appendPaymentIdentifierToExtensions } from '@x402/extensions/payment-identifier';
import type { Address } from 'viem';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/dialects/postgres/store.js';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { connectHttpClient } from '../support/mcp.js';
import { countingTools, LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { createTestSchema, describeWithPostgres, type TestSchema } from '../support/postgres.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';

const args = { payment: 100, ratePerPeriod: 0.05, periods: 10 };
/** Why a paid call may lose the race for a payment: another instance is running it, or already settled it. */
const LOST_RACE = ['payment_in_flight', 'payment_already_used'];

let paid: PaidEnvironment;
let schema: TestSchema;
let a: TestServer;
let b: TestServer;
let mcpA: Client;
let mcpB: Client;
let runs: Map<string, number>;

async function entryOf(server: TestServer): Promise<{ challenge: PaymentRequired; entry: PaymentRequirements }> {
  const res = await fetch(`${server.url}/api/annuity`, { method: 'POST' });
  const challenge = decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
  const entry = challenge.accepts.find((x) => x.network === LOCAL_NETWORK);
  if (!entry) throw new Error('the local network is not advertised');
  return { challenge, entry };
}

function payHttp(server: TestServer, payment: PaymentPayload): Promise<Response> {
  return fetch(`${server.url}/api/annuity`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body: JSON.stringify(args),
  });
}

function payMcp(client: Client, payment: PaymentPayload): Promise<CallToolResult> {
  return client.callTool({
    name: 'annuity',
    arguments: args,
    _meta: { 'x402/payment': payment },
  }) as Promise<CallToolResult>;
}

/** The refusal reason of an HTTP answer: a 402 challenge's `error`, or the error body's `code`. */
async function httpReason(res: Response): Promise<string> {
  const body = (await res.json()) as { error: string | { code: string } };
  return typeof body.error === 'string' ? body.error : body.error.code;
}

/** The refusal reason of an MCP error result: the challenge's `error`, or the error body's `code`. */
function mcpReason(result: CallToolResult): string {
  const structured = result.structuredContent as { error?: unknown } | undefined;
  if (typeof structured?.error === 'string') return structured.error;
  const text = result.content[0]?.type === 'text' ? result.content[0].text : '{}';
  return (JSON.parse(text) as { error: { code: string } }).error.code;
}

async function settledReceiptsOf(payer: Address) {
  return (await a.runtime.store.ledger.listReceipts({ limit: 1000 })).filter(
    (r) => r.payer === payer && r.status === 'settled',
  );
}

describeWithPostgres('two Tollbooth instances on one PostgreSQL', () => {
  beforeAll(async () => {
    paid = await startPaidEnvironment(4);
    schema = await createTestSchema('tollbooth_two_instances');
    const counted = countingTools([annuity] as AnyToolDefinition[]);
    runs = counted.runs;
    // Both start at once on an empty schema: the migrations take turns under the advisory lock.
    const env = { ...paid.env, DATABASE_URL: schema.url };
    [a, b] = await Promise.all([
      startTestServer(env, { tools: counted.tools }),
      startTestServer(env, { tools: counted.tools }),
    ]);
    [mcpA, mcpB] = await Promise.all([connectHttpClient(a.url), connectHttpClient(b.url)]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([mcpA?.close(), mcpB?.close()]);
    await Promise.all([a?.close(), b?.close()]);
    await schema?.drop();
    await paid?.stop();
  });

  it('keeps both instances on the shared PostgreSQL store (DATABASE_URL), not on their own SQLite files', () => {
    expect(a.runtime.store).toBeInstanceOf(PostgresStore);
    expect(b.runtime.store).toBeInstanceOf(PostgresStore);
  });

  it('sells one payment once when it reaches both at the same moment, over HTTP on one and MCP on the other', async () => {
    const payer = paid.payers[0]!;
    const before = {
      payer: await paid.balance(payer.address),
      payTo: await paid.balance(paid.payTo),
      runs: runs.get('annuity') ?? 0,
    };
    const payment = await signExactPayment(payer, (await entryOf(a)).entry);
    const [http, mcp] = await Promise.all([payHttp(a, payment), payMcp(mcpB, payment)]);
    const wins = [http.status === 200, !mcp.isError].filter(Boolean);
    expect(wins).toHaveLength(1);
    if (http.status === 200) expect(LOST_RACE).toContain(mcpReason(mcp));
    else expect(LOST_RACE).toContain(await httpReason(http));
    expect(runs.get('annuity')).toBe(before.runs + 1);
    expect(await paid.balance(payer.address)).toBe(before.payer - 1000n);
    expect(await paid.balance(paid.payTo)).toBe(before.payTo + 1000n);
    expect(await settledReceiptsOf(payer.address)).toHaveLength(1);
  });

  it('sells one payment once when ten copies go to each instance at once, MCP on the first and HTTP on the second', async () => {
    const payer = paid.payers[1]!;
    const before = { payer: await paid.balance(payer.address), runs: runs.get('annuity') ?? 0 };
    const payment = await signExactPayment(payer, (await entryOf(b)).entry);
    const [viaMcp, viaHttp] = await Promise.all([
      Promise.all(Array.from({ length: 10 }, () => payMcp(mcpA, payment))),
      Promise.all(Array.from({ length: 10 }, () => payHttp(b, payment))),
    ]);
    const mcpWins = viaMcp.filter((r) => !r.isError);
    const httpWins = viaHttp.filter((r) => r.status === 200);
    expect(mcpWins.length + httpWins.length).toBe(1);
    for (const r of viaMcp.filter((x) => x.isError)) expect(LOST_RACE).toContain(mcpReason(r));
    for (const r of viaHttp.filter((x) => x.status !== 200)) expect(LOST_RACE).toContain(await httpReason(r));
    expect(runs.get('annuity')).toBe(before.runs + 1);
    expect(await paid.balance(payer.address)).toBe(before.payer - 1000n);
    expect(await settledReceiptsOf(payer.address)).toHaveLength(1);
  });

  it('refuses on one instance, over HTTP and MCP, a payment the other instance already settled', async () => {
    const payer = paid.payers[2]!;
    const payment = await signExactPayment(payer, (await entryOf(a)).entry);
    expect((await payHttp(a, payment)).status).toBe(200);
    const runsAfterFirst = runs.get('annuity');
    const overHttp = await payHttp(b, payment);
    expect(overHttp.status).toBe(402);
    expect(await httpReason(overHttp)).toBe('payment_already_used');
    const overMcp = await payMcp(mcpB, payment);
    expect(overMcp.isError).toBe(true);
    expect(mcpReason(overMcp)).toBe('payment_already_used');
    expect(runs.get('annuity')).toBe(runsAfterFirst);
  });

  it('answers an idempotent retry on the other instance with the stored result, without running or charging again', async () => {
    const payer = paid.payers[3]!;
    const before = { payer: await paid.balance(payer.address), runs: runs.get('annuity') ?? 0 };
    const { challenge, entry } = await entryOf(a);
    const payment = await signExactPayment(payer, entry);
    const extensions = structuredClone(challenge.extensions ?? {}) as Record<string, unknown>;
    appendPaymentIdentifierToExtensions(extensions, 'two_instances_retry_0001');
    payment.extensions = extensions;
    const first = await payHttp(a, payment);
    expect(first.status).toBe(200);
    const retried = await payHttp(b, payment);
    expect(retried.status).toBe(200);
    expect(await retried.json()).toEqual(await first.json());
    const receipt = (res: Response) =>
      (decodeHeader(res.headers.get('payment-response')) as { transaction: string }).transaction;
    expect(receipt(retried)).toBe(receipt(first));
    expect(runs.get('annuity')).toBe(before.runs + 1);
    expect(await paid.balance(payer.address)).toBe(before.payer - 1000n);
    expect(await settledReceiptsOf(payer.address)).toHaveLength(1);
  });
});
