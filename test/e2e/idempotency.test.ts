import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { appendPaymentIdentifierToExtensions } from '@x402/extensions/payment-identifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolError } from '../../src/shared/errors.js';
import { defineTool, type AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { LOCAL_NETWORK, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { startPaidServer, type PaidServer } from '../support/paid-server.js';
import { decodeHeader, type TestServer } from '../support/server.js';

const args = { payment: 100, ratePerPeriod: 0.05, periods: 10 };

/** A gate the slow tool waits on, so a test can hold a first call in flight. */
let gate: Promise<void> = Promise.resolve();
let failNext = false;

/** A tools-group test tool that waits on the gate, and fails once when told to. */
const slowTool = defineTool({
  name: 'slow-echo',
  title: 'Slow echo',
  description: 'Test tool: echoes its input after the test opens the gate.',
  group: 'tools',
  method: 'POST',
  path: '/api/test/slow-echo',
  input: z.object({ text: z.string() }),
  output: z.object({ echo: z.string() }),
  pricing: { usd: '0.001', accepts: 'every-network' },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: async ({ text }) => {
    await gate;
    if (failNext) {
      failNext = false;
      throw new ToolError('upstream_unavailable', 'The test upstream is down.');
    }
    return { echo: text };
  },
});

let paid: PaidEnvironment;
let server: TestServer;
let mcp: Client;
let runs: Map<string, number>;

let setup: PaidServer;
beforeAll(async () => {
  ({ paid, server, mcp, runs } = setup = await startPaidServer(7, {
    tools: [annuity, slowTool] as AnyToolDefinition[],
  }));
}, 120_000);
afterAll(() => setup?.stop());

async function challengeOf(path: string): Promise<PaymentRequired> {
  const res = await fetch(server.url + path, { method: 'POST' });
  return decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
}

/** Signs the local entry and echoes the declared extensions with the given payment id added, as a client would. */
async function paymentWithId(
  payerIndex: number,
  path: string,
  id: string | undefined,
  edit?: (ext: Record<string, unknown>) => void,
): Promise<PaymentPayload> {
  const challenge = await challengeOf(path);
  const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK) as PaymentRequirements;
  const payment = await signExactPayment(paid.payers[payerIndex]!, entry);
  const extensions = structuredClone(challenge.extensions ?? {}) as Record<string, unknown>;
  if (id !== undefined && /^[A-Za-z0-9_-]{16,128}$/.test(id)) appendPaymentIdentifierToExtensions(extensions, id);
  else if (id !== undefined) (extensions['payment-identifier'] as { info: Record<string, unknown> }).info.id = id; // what a broken client sends
  payment.extensions = extensions;
  edit?.(payment.extensions as Record<string, unknown>);
  return payment;
}

function post(path: string, payment: PaymentPayload, body: unknown): Promise<Response> {
  return fetch(server.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body: JSON.stringify(body),
  });
}

const receiptOf = (res: Response) =>
  decodeHeader(res.headers.get('payment-response')) as { success: boolean; transaction: string };

describe('payment-identifier idempotency', () => {
  it('returns the stored response and receipt to a retry with the same id and payment, without running or settling again', async () => {
    const payer = paid.payers[0]!;
    const before = await paid.balance(payer.address);
    const payment = await paymentWithId(0, '/api/annuity', 'pay_retry_after_lost_response_01');
    const first = await post('/api/annuity', payment, args);
    expect(first.status).toBe(200);
    const firstBody = await first.json();
    const again = await post('/api/annuity', payment, args);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(firstBody);
    expect(receiptOf(again)).toEqual(receiptOf(first));
    expect(runs.get('annuity')).toBe(1);
    expect(await paid.balance(payer.address)).toBe(before - 1000n);
  });

  it('serves the stored result across transports: paid over HTTP, retried over MCP', async () => {
    const runsBefore = runs.get('annuity') ?? 0;
    const payment = await paymentWithId(1, '/api/annuity', 'pay_cross_transport_retry_0002');
    const first = await post('/api/annuity', payment, args);
    expect(first.status).toBe(200);
    const viaMcp = await mcp.callTool({ name: 'annuity', arguments: args, _meta: { 'x402/payment': payment } });
    expect(viaMcp.isError).toBeFalsy();
    expect(viaMcp.structuredContent).toEqual(await first.json());
    expect(viaMcp._meta?.['x402/payment-response']).toEqual(receiptOf(first));
    expect(runs.get('annuity')).toBe(runsBefore + 1);
  });

  it('runs once when the same id and payment arrive five times at once; the others get the result or a retryable 409', async () => {
    const payer = paid.payers[2]!;
    const before = await paid.balance(payer.address);
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    const payment = await paymentWithId(2, '/api/test/slow-echo', 'pay_concurrent_duplicates_0003');
    const calls = Array.from({ length: 5 }, () => post('/api/test/slow-echo', payment, { text: 'once' }));
    await new Promise((r) => setTimeout(r, 300));
    open();
    const answers = await Promise.all(calls);
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
    for (const res of answers.filter((r) => r.status === 409)) {
      expect(await res.json()).toMatchObject({ error: { code: 'payment_in_flight', retryable: true } });
    }
    expect(runs.get('slow-echo')).toBe(1);
    // A later retry gets the stored result.
    const later = await post('/api/test/slow-echo', payment, { text: 'once' });
    expect(later.status).toBe(200);
    expect(await later.json()).toEqual({ echo: 'once' });
    expect(runs.get('slow-echo')).toBe(1);
    expect(await paid.balance(payer.address)).toBe(before - 1000n);
  });

  it('refuses the same id with a different payment with 409, and never runs the tool for it', async () => {
    const runsBefore = runs.get('annuity') ?? 0;
    const first = await post(
      '/api/annuity',
      await paymentWithId(3, '/api/annuity', 'pay_one_id_two_payments_0004'),
      args,
    );
    expect(first.status).toBe(200);
    const other = await post(
      '/api/annuity',
      await paymentWithId(3, '/api/annuity', 'pay_one_id_two_payments_0004'),
      args,
    );
    expect(other.status).toBe(409);
    expect(await other.json()).toMatchObject({ error: { code: 'payment_identifier_conflict' } });
    expect(runs.get('annuity')).toBe(runsBefore + 1);
  });

  it('refuses the same id and payment for a different request with 409', async () => {
    const payment = await paymentWithId(4, '/api/annuity', 'pay_one_id_two_requests_0005');
    expect((await post('/api/annuity', payment, args)).status).toBe(200);
    const runsBefore = runs.get('annuity') ?? 0;
    const other = await post('/api/annuity', payment, { ...args, periods: 12 });
    expect(other.status).toBe(409);
    expect(await other.json()).toMatchObject({ error: { code: 'payment_identifier_conflict' } });
    expect(runs.get('annuity')).toBe(runsBefore);
  });

  it('treats inputs that differ only in key order as the same request', async () => {
    const payment = await paymentWithId(4, '/api/annuity', 'pay_key_order_irrelevant_0006');
    expect((await post('/api/annuity', payment, args)).status).toBe(200);
    const runsBefore = runs.get('annuity') ?? 0;
    const reordered = await post('/api/annuity', payment, { periods: 10, ratePerPeriod: 0.05, payment: 100 });
    expect(reordered.status).toBe(200);
    expect(runs.get('annuity')).toBe(runsBefore);
  });

  it('forgets an id whose call failed, so the retry with the same id and payment runs and is charged once', async () => {
    const payer = paid.payers[5]!;
    const before = await paid.balance(payer.address);
    failNext = true;
    const payment = await paymentWithId(5, '/api/test/slow-echo', 'pay_failed_then_retried_0007');
    const failed = await post('/api/test/slow-echo', payment, { text: 'retry' });
    expect(failed.status).toBe(502);
    expect(await paid.balance(payer.address)).toBe(before);
    const retried = await post('/api/test/slow-echo', payment, { text: 'retry' });
    expect(retried.status).toBe(200);
    expect(await paid.balance(payer.address)).toBe(before - 1000n);
  });

  it.each([
    ['too short', 'short_id'],
    ['with forbidden characters', 'pay/with/slashes/and/more'],
    ['too long', 'x'.repeat(129)],
  ])(
    'answers an id that is %s with 400 invalid_payment_identifier before anything runs or is charged',
    async (_label, id) => {
      const payer = paid.payers[6]!;
      const before = await paid.balance(payer.address);
      const runsBefore = runs.get('annuity') ?? 0;
      const res = await post('/api/annuity', await paymentWithId(6, '/api/annuity', id), args);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: 'invalid_payment_identifier' } });
      expect(runs.get('annuity') ?? 0).toBe(runsBefore);
      expect(await paid.balance(payer.address)).toBe(before);
    },
  );

  it('answers an invalid id over MCP with an error result naming it', async () => {
    const payment = await paymentWithId(6, '/api/annuity', 'tiny');
    const result = await mcp.callTool({ name: 'annuity', arguments: args, _meta: { 'x402/payment': payment } });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('invalid_payment_identifier');
  });
});

describe('builder-code echoes', () => {
  it('accepts a payment that echoes the app code and adds its own service codes', async () => {
    const payment = await paymentWithId(6, '/api/annuity', undefined, (ext) => {
      const code = ext['builder-code'] as { info: Record<string, unknown> };
      code.info.s = ['agentkit', 'wallet_x'];
    });
    const res = await post('/api/annuity', payment, args);
    expect(res.status).toBe(200);
  });

  it('refuses a tampered app code with 402 extension_echo_mismatch and runs nothing', async () => {
    const runsBefore = runs.get('annuity') ?? 0;
    const payment = await paymentWithId(6, '/api/annuity', undefined, (ext) => {
      (ext['builder-code'] as { info: Record<string, unknown> }).info.a = 'someone_else';
    });
    const res = await post('/api/annuity', payment, args);
    expect(res.status).toBe(402);
    expect((await res.json()) as { error: string }).toMatchObject({ error: 'extension_echo_mismatch' });
    expect(runs.get('annuity') ?? 0).toBe(runsBefore);
  });

  it('refuses more service codes than the extension allows', async () => {
    const payment = await paymentWithId(6, '/api/annuity', undefined, (ext) => {
      (ext['builder-code'] as { info: Record<string, unknown> }).info.s = Array.from(
        { length: 12 },
        (_, i) => `svc${i}`,
      );
    });
    const res = await post('/api/annuity', payment, args);
    expect(res.status).toBe(402);
    expect((await res.json()) as { error: string }).toMatchObject({ error: 'extension_echo_mismatch' });
  });
});
