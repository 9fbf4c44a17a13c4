import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { pendingBody, ToolError } from '../../src/shared/errors.js';
import { settlementMessage } from '../../src/payments/ledger/verdicts.js';
import { NOTHING_CHARGED, noted, refusalFor, withChargeNote, withRefusalNote } from '../../src/pipeline/charge-note.js';
import { defineTool, type AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { LOCAL_NETWORK, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, officialPayment } from '../support/payer.js';
import { startPaidServer, type PaidServer } from '../support/paid-server.js';
import { decodeHeader, type TestServer } from '../support/server.js';
import { failingTool, notBuiltTool } from '../support/tools.js';

/** Every mention of a charge in a message: a paid call's error carries exactly one, a free tool's none. */
const chargeMentions = (message: string) => message.match(/charg/gi)?.length ?? 0;

describe('the charge note', () => {
  it('ends a message with the charge fact as one more sentence', () => {
    expect(noted('The upstream is down. Try again later.')).toBe(
      `The upstream is down. Try again later. ${NOTHING_CHARGED}`,
    );
    expect(noted('The call was cancelled')).toBe(`The call was cancelled. ${NOTHING_CHARGED}`);
    expect(noted('It failed (HTTP 500)')).toBe(`It failed (HTTP 500) ${NOTHING_CHARGED}`);
  });

  it('keeps the code, field, details and cause of the error it notes, and never says it twice', () => {
    const cause = new Error('root');
    const error = new ToolError('not_found', 'No such coin.', { field: 'coin', details: { known: ['BTC'] }, cause });
    const once = withChargeNote(error);
    expect(once.toBody()).toEqual({
      error: {
        code: 'not_found',
        message: `No such coin. ${NOTHING_CHARGED}`,
        retryable: false,
        field: 'coin',
        details: { known: ['BTC'] },
      },
    });
    expect(once.cause).toBe(cause);
    expect(withChargeNote(once).message).toBe(once.message);
  });
});

describe('the charge note of a payment refusal', () => {
  it('ends a refusal made before any payment was taken, and leaves one whose payment was taken for another call', () => {
    const refused = withRefusalNote({ reason: 'invalid_payment', message: 'The payment is not base64.' });
    expect(refused.message).toBe(`The payment is not base64. ${NOTHING_CHARGED}`);
    const verdict = withRefusalNote({ reason: 'invalid_exact_evm_signature', message: 'The signature is wrong.' });
    expect(verdict.message).toBe(`The signature is wrong. ${NOTHING_CHARGED}`);
    for (const reason of ['payment_already_used', 'payment_in_flight', 'settlement_pending']) {
      expect(withRefusalNote({ reason, message: 'Used.' }).message).toBe('Used.');
    }
  });

  it('notes a refusal made before the pipeline on a paid route only', () => {
    const error = new ToolError('invalid_input', 'The body is not JSON.');
    expect(refusalFor(error, true).message).toBe(`The body is not JSON. ${NOTHING_CHARGED}`);
    expect(refusalFor(error, false)).toBe(error);
  });
});

describe('a paid call whose settlement is in doubt', () => {
  it('is never told that nothing was charged, only what is known; a failed settlement is told once', () => {
    const network = LOCAL_NETWORK as never;
    const open = [
      settlementMessage('settlement_pending'),
      settlementMessage('settlement_outcome_unknown'),
      pendingBody({ success: false, errorReason: 'settlement_pending', transaction: '0xab', network }).error.message,
      pendingBody({ success: false, errorReason: 'settlement_outcome_unknown', transaction: '', network }).error
        .message,
    ];
    for (const message of open) expect(message).not.toMatch(/nothing was charged|not charged/i);
    expect(chargeMentions(settlementMessage('transaction_failed'))).toBe(1);
  });
});

const freeFails = defineTool({
  name: 'free-fails',
  title: 'Free fails',
  description: 'Test tool: a free tool whose handler always fails.',
  group: 'tools',
  method: 'POST',
  path: '/v1/test/free-fails',
  input: z.object({ note: z.string().optional().describe('Ignored.') }),
  output: z.object({ ok: z.boolean() }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: () => {
    throw new ToolError('upstream_unavailable', 'The test upstream is down. Try again later.');
  },
});

let paid: PaidEnvironment;
let server: TestServer;
let mcp: Client;
let runs: Map<string, number>;

let setup: PaidServer;
beforeAll(async () => {
  ({ paid, server, mcp, runs } = setup = await startPaidServer(2, {
    tools: [annuity, failingTool, notBuiltTool, freeFails] as AnyToolDefinition[],
  }));
}, 120_000);
afterAll(() => setup?.stop());

type ErrorAnswer = { code: string; message: string };
const errorOf = (result: CallToolResult) =>
  (JSON.parse((result.content[0] as { text: string }).text) as { error: ErrorAnswer }).error;

/** A payment for `tool` signed by the official client against the transport's own challenge. */
async function paymentFor(transport: 'HTTP' | 'MCP', tool: AnyToolDefinition, payer: number, args: unknown) {
  const challenge =
    transport === 'HTTP'
      ? decodeHeader((await fetch(server.url + tool.path, { method: 'POST' })).headers.get('payment-required'))
      : (await mcp.callTool({ name: tool.name, arguments: args as Record<string, unknown> })).structuredContent;
  return officialPayment(paid.payers[payer]!, challenge as PaymentRequired, LOCAL_NETWORK);
}

/** One call over a transport, with a payment or without: the error it was answered with. */
async function failure(transport: 'HTTP' | 'MCP', tool: AnyToolDefinition, args: unknown, payment?: unknown) {
  if (transport === 'HTTP') {
    const res = await fetch(server.url + tool.path, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(payment ? { 'payment-signature': encodePayment(payment) } : {}),
      },
      body: JSON.stringify(args),
    });
    expect(res.ok).toBe(false);
    expect(res.headers.get('payment-response')).toBeNull();
    return ((await res.json()) as { error: ErrorAnswer }).error;
  }
  const result = (await mcp.callTool({
    name: tool.name,
    arguments: args as Record<string, unknown>,
    ...(payment ? { _meta: { 'x402/payment': payment } } : {}),
  })) as CallToolResult;
  expect(result.isError).toBe(true);
  expect(result._meta?.['x402/payment-response']).toBeUndefined();
  return errorOf(result);
}

describe.each(['HTTP', 'MCP'] as const)('every failure of a paid call over %s', (transport) => {
  const payer = transport === 'HTTP' ? 0 : 1;

  it('says once, at its end, that nothing was charged when the handler failed after the payment verified', async () => {
    const before = { balance: await paid.balance(paid.payers[payer]!.address), runs: runs.get('always-fails') ?? 0 };
    const payment = await paymentFor(transport, failingTool, payer, {});
    const error = await failure(transport, failingTool, {}, payment);
    expect(error).toEqual(expect.objectContaining({ code: 'upstream_unavailable' }));
    expect(error.message).toBe(`The test upstream is down. ${NOTHING_CHARGED}`);
    expect(runs.get('always-fails')).toBe(before.runs + 1);
    expect(await paid.balance(paid.payers[payer]!.address)).toBe(before.balance);
  });

  it('says it once when the tool is not available on this server', async () => {
    const payment = await paymentFor(transport, notBuiltTool, payer, { coin: 'BTC' });
    const error = await failure(transport, notBuiltTool, { coin: 'BTC' }, payment);
    expect(error).toEqual({
      code: 'not_implemented',
      message: `not-built is not available on this server. ${NOTHING_CHARGED}`,
      retryable: false,
    });
  });

  it('says it once for invalid input and for an unknown field, refused before the payment is read', async () => {
    const invalid = await failure(transport, annuity, { payment: 'ten', ratePerPeriod: 0.05, periods: 10 }, 'x');
    expect(invalid.code).toBe('invalid_input');
    expect(invalid.message).toMatch(
      /^Invalid input: payment: .+\. Fix the field and call again\. Nothing was charged\.$/,
    );
    expect(chargeMentions(invalid.message)).toBe(1);
    const unknown = await failure(transport, annuity, { payment: 100, ratePerPeriod: 0.05, periods: 10, tipe: 1 }, 'x');
    expect(unknown.message).toBe(
      `Unknown field: tipe. This endpoint takes: payment, ratePerPeriod, periods, type. ${NOTHING_CHARGED}`,
    );
  });
});

describe.each(['HTTP', 'MCP'] as const)('a refused payment over %s', (transport) => {
  const payer = transport === 'HTTP' ? 0 : 1;
  const args = { payment: 100, ratePerPeriod: 0.05, periods: 10 };

  it('says once, at its end, that nothing was charged when the payment cannot be read', async () => {
    const error = await failure(transport, annuity, args, transport === 'HTTP' ? 'not a payment' : { x402Version: 2 });
    expect(error.code).toBe('invalid_payment');
    expect(error.message).toContain(NOTHING_CHARGED);
    expect(chargeMentions(error.message)).toBe(1);
  });

  it('never says it for a payment already used for another call', async () => {
    const payment = await paymentFor(transport, annuity, payer, args);
    const first = await mcp.callTool({ name: annuity.name, arguments: args, _meta: { 'x402/payment': payment } });
    expect(first.isError).toBeFalsy();
    const again = { ...args, periods: 11 };
    const answer =
      transport === 'HTTP'
        ? await fetch(server.url + annuity.path, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
            body: JSON.stringify(again),
          }).then(async (res) => `${res.status} ${await res.text()}`)
        : JSON.stringify(
            await mcp.callTool({ name: annuity.name, arguments: again, _meta: { 'x402/payment': payment } }),
          );
    expect(answer).toContain('This payment was already used for a call');
    expect(answer).not.toMatch(/nothing was charged/i);
  });
});

describe.each(['HTTP', 'MCP'] as const)('a free tool over %s', (transport) => {
  it('never mentions a charge when its handler fails', async () => {
    const error = await failure(transport, freeFails, {});
    expect(error).toEqual({
      code: 'upstream_unavailable',
      message: 'The test upstream is down. Try again later.',
      retryable: true,
    });
  });

  it('never mentions a charge when its input is invalid or carries an unknown field', async () => {
    const invalid = await failure(transport, freeFails, { note: 3 });
    expect(invalid.code).toBe('invalid_input');
    expect(chargeMentions(invalid.message)).toBe(0);
    const unknown = await failure(transport, freeFails, { verbose: true });
    expect(unknown).toMatchObject({
      code: 'invalid_input',
      message: 'Unknown field: verbose. This endpoint takes: note.',
    });
  });
});
