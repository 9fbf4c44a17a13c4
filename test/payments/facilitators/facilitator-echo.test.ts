import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/shared/log.js';
import type { AnyToolDefinition } from '../../../src/tool/tool.js';
import { annuity } from '../../../tools/annuity.js';
import { lookalikeFor, type LookalikeFacilitator } from '../../support/facilitator.js';
import { connectHttpClient } from '../../support/mcp.js';
import { signCredential } from '../../support/mpp.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../../support/paid.js';
import { encodePayment, signExactPayment } from '../../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../../support/server.js';

/** The configured credentials: a static bearer token, a Basic password (both FACILITATOR_HEADERS) and the MPP key. */
const TOKEN = 'st4tic-Facilitator-Token-0123456789abcdef';
const BASIC = Buffer.from('u7Kq-operator:B4sic-Pa55word-for-the-facilitator').toString('base64');
const MPP_SECRET = 'mpp-Secret-key-of-at-least-32-bytes-long!!';
const OTHER_PAYER = '0x000000000000000000000000000000000000dEaD';
const args = { payment: 100, ratePerPeriod: 0.05, periods: 10 };

/** What a careless facilitator echoes of a credential: raw, base64 (alone and inside user:…), base64url, hex, a prefix. */
function echoes(secret: string): string[] {
  const bytes = Buffer.from(secret);
  return [
    secret,
    bytes.toString('base64'),
    Buffer.from(`user:${secret}`).toString('base64'),
    bytes.toString('base64url'),
    bytes.toString('hex'),
    secret.slice(0, 14),
  ];
}
const ECHOED = [TOKEN, MPP_SECRET, 'B4sic-Pa55word-for-the-facilitator'].flatMap(echoes).concat(BASIC);
/** 8-character windows of every echo (past the first characters, which an offset encoding shares with other bytes). */
const WINDOWS = ECHOED.flatMap((e) => [4, 6].map((at) => e.slice(at, at + 8)).filter((w) => w.length === 8));
const ECHO_TEXT = `upstream said: ${ECHOED.join(' | ')} (Basic ${BASIC})`;

function expectClean(text: string, where: string): void {
  for (const window of WINDOWS) {
    expect(text, `${where} carries ${window}`).not.toContain(window);
  }
}

/** The whole answer as text: status, every header (the base64 ones decoded too) and the body. */
async function wholeAnswer(res: Response): Promise<string> {
  const headers = [...res.headers].map(([name, value]) => {
    let decoded = '';
    try {
      decoded = Buffer.from(value, 'base64').toString('utf8');
    } catch {
      // not base64
    }
    return `${name}: ${value} ${decoded}`;
  });
  return `${res.status}\n${headers.join('\n')}\n${await res.text()}`;
}

let paid: PaidEnvironment;
let facilitator: LookalikeFacilitator;
let server: TestServer;
let mcp: Client;
const lines: string[] = [];
beforeAll(async () => {
  paid = await startPaidEnvironment(3);
  const moved = await lookalikeFor(paid, LOCAL_NETWORK);
  facilitator = moved.facilitator;
  const headers = { [facilitator.url]: { authorization: `Bearer ${TOKEN}`, 'x-upstream-auth': `Basic ${BASIC}` } };
  server = await startTestServer(
    {
      ...moved.serverEnv,
      FACILITATOR_HEADERS: JSON.stringify(headers),
      MPP_SECRET_KEY: MPP_SECRET,
      LOG_LEVEL: 'info',
    },
    {
      tools: [annuity] as AnyToolDefinition[],
      log: createLogger('info', { write: (line: string) => void lines.push(line) }),
    },
  );
  mcp = await connectHttpClient(server.url);
}, 120_000);
afterAll(async () => {
  await mcp?.close();
  await server?.close();
  await facilitator?.close();
  await paid?.stop();
});

async function payHttp(payer: number): Promise<Response> {
  const probe = await fetch(server.url + '/api/annuity', { method: 'POST' });
  const challenge = decodeHeader(probe.headers.get('payment-required')) as PaymentRequired;
  const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK)!;
  return fetch(server.url + '/api/annuity', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'payment-signature': encodePayment(await signExactPayment(paid.payers[payer]!, entry)),
    },
    body: JSON.stringify(args),
  });
}

async function payMcp(payer: number): Promise<string> {
  const unpaid = await mcp.callTool({ name: 'annuity', arguments: args });
  const entry = (unpaid.structuredContent as unknown as PaymentRequired).accepts.find(
    (a) => a.network === LOCAL_NETWORK,
  )!;
  const payment = await signExactPayment(paid.payers[payer]!, entry);
  return JSON.stringify(await mcp.callTool({ name: 'annuity', arguments: args, _meta: { 'x402/payment': payment } }));
}

async function payMpp(payer: number): Promise<Response> {
  const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(args) };
  const credential = await signCredential(paid.payers[payer]!, server.url + '/api/annuity', init);
  return fetch(server.url + '/api/annuity', { ...init, headers: { ...init.headers, authorization: credential } });
}

describe('a facilitator whose refusals echo our credentials', () => {
  it('never reaches the caller (HTTP, MCP, MPP) nor the logs with them, in any encoding, on verify', async () => {
    facilitator.setAnswer({
      verify: {
        status: 400,
        body: { isValid: false, invalidReason: 'invalid_exact_evm_signature', invalidMessage: ECHO_TEXT },
      },
    });
    const res = await payHttp(0);
    expect(res.status).toBe(402);
    expectClean(await wholeAnswer(res), 'the HTTP answer');
    const result = await payMcp(0);
    expect(result).toContain('invalid_exact_evm_signature');
    expectClean(result, 'the MCP result');
    const mpp = await payMpp(0);
    expect(mpp.status).toBe(402);
    expectClean(await wholeAnswer(mpp), 'the MPP problem');
    // A reason that is not a reason code (here a credential) is answered as ours.
    facilitator.setAnswer({ verify: { status: 400, body: { isValid: false, invalidReason: BASIC } } });
    const odd = await payHttp(0);
    expect((decodeHeader(odd.headers.get('payment-required')) as { error?: string }).error).toBe('invalid_payment');
    facilitator.setAnswer({ verify: undefined });
    const logs = lines.join('');
    expect(logs).toContain('the facilitator refused a payment');
    expectClean(logs, 'the log');
  });

  it('never reaches the caller nor the logs with them on settle: the receipt carries our sentence', async () => {
    facilitator.setAnswer({
      settle: {
        status: 200,
        body: {
          success: false,
          errorReason: 'transaction_failed',
          errorMessage: ECHO_TEXT,
          transaction: '',
          network: LOCAL_NETWORK,
        },
      },
    });
    const res = await payHttp(1);
    expect(res.status).toBe(402);
    const receipt = decodeHeader(res.headers.get('payment-response')) as { errorReason: string; errorMessage: string };
    expect(receipt.errorReason).toBe('transaction_failed');
    expect(receipt.errorMessage).toMatch(/^The payment did not settle \(transaction_failed\)/);
    expectClean(await wholeAnswer(res), 'the HTTP answer');
    expectClean(await payMcp(1), 'the MCP result');
    facilitator.setAnswer({ settle: undefined });
    expectClean(lines.join(''), 'the log');
  });
});

describe('a facilitator that names another payer', () => {
  it('is not believed: the receipt and the stored receipt name the payer we verified, and a warning is logged', async () => {
    facilitator.setRewrite((_kind, answer) => ({ ...answer, payer: OTHER_PAYER }));
    try {
      const res = await payHttp(2);
      expect(res.status).toBe(200);
      const payer = paid.payers[2]!.address;
      expect((decodeHeader(res.headers.get('payment-response')) as { payer: string }).payer).toBe(payer);
      const [stored] = await server.runtime.store.ledger.listReceipts({ limit: 1 });
      expect(stored).toMatchObject({ status: 'settled', payer });
      expect(lines.join('')).toContain('the facilitator named another payer');
    } finally {
      facilitator.setRewrite(undefined);
    }
  });
});
