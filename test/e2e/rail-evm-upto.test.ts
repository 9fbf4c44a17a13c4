import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_MAINNET } from '../../src/shared/networks.js';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { permit2NonceUsed } from '../support/chain/permit2.js';
import { startBaseEnvironment, type BaseEnvironment } from '../support/chain/permit2-env.js';
import { officialUptoPayment, resignUpto, uptoAuthorization } from '../support/chain/permit2-sign.js';
import { connectHttpClient } from '../support/mcp.js';
import { countingTools } from '../support/paid.js';
import { encodePayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import {
  expectWindowRefused,
  nowSeconds,
  TEN_YEARS_SECONDS,
  UINT256_MAX,
  watchPaymentPath,
} from '../support/window.js';

let base: BaseEnvironment;
let server: TestServer;
let mcp: Client;
let runs: Map<string, number>;
const args = { payment: 100, ratePerPeriod: 0.05, periods: 10 };
const body = JSON.stringify(args);

beforeAll(async () => {
  // Payers 0–5 approved Permit2; payer 6 never did.
  base = await startBaseEnvironment(7, { permit2: { approved: 6 } });
  const counted = countingTools([annuity] as AnyToolDefinition[]);
  runs = counted.runs;
  server = await startTestServer(base.env, { tools: counted.tools });
  mcp = await connectHttpClient(server.url);
}, 120_000);
afterAll(async () => {
  await mcp?.close();
  await server?.close();
  await base?.stop();
});

async function challenge(): Promise<PaymentRequired> {
  const res = await fetch(server.url + '/api/annuity', { method: 'POST' });
  return decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
}

function pay(payment: unknown) {
  return fetch(server.url + '/api/annuity', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body,
  });
}

const runCount = () => runs.get('annuity') ?? 0;
const reasonOf = (answer: unknown) => {
  const { error } = answer as { error: string | { code: string } };
  return typeof error === 'string' ? error : error.code;
};

describe('EVM upto (Permit2) through a real Tollbooth server, settled on a local Base chain', () => {
  it('is paid over HTTP by the official fetch client with UptoEvmScheme: the price is settled and reported as the amount', async () => {
    const payer = base.payers[0]!;
    const client = new x402Client((_v, reqs) => reqs.find((r) => r.scheme === 'upto' && r.network === BASE_MAINNET)!);
    client.register('eip155:*', new UptoEvmScheme(payer));
    const before = {
      payer: await base.balance(payer.address),
      payTo: await base.balance(base.payTo),
      runs: runCount(),
    };
    const res = await wrapFetchWithPayment(fetch, client)(server.url + '/api/annuity', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { presentValue: number }).presentValue).toBeCloseTo(772.1734929, 5);
    const receipt = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!);
    expect(receipt).toMatchObject({ success: true, network: BASE_MAINNET, payer: payer.address, amount: '1000' });
    expect(runCount()).toBe(before.runs + 1);
    expect(await base.balance(payer.address)).toBe(before.payer - 1000n);
    expect(await base.balance(base.payTo)).toBe(before.payTo + 1000n);
    const [stored] = await server.runtime.store.ledger.listReceipts({ limit: 1 });
    expect(stored).toMatchObject({
      tool: 'annuity',
      status: 'settled',
      network: BASE_MAINNET,
      amount: '1000',
      transaction: receipt.transaction,
    });
  });

  it('is paid over MCP (streamable HTTP) with the upto payment in _meta and the receipt in _meta', async () => {
    const payer = base.payers[1]!;
    const before = { payer: await base.balance(payer.address), runs: runCount() };
    const payment = await officialUptoPayment(payer, await challenge(), BASE_MAINNET);
    const result = await mcp.callTool({ name: 'annuity', arguments: args, _meta: { 'x402/payment': payment } });
    expect(result.isError).toBeFalsy();
    expect(result._meta?.['x402/payment-response']).toMatchObject({
      success: true,
      network: BASE_MAINNET,
      payer: payer.address,
      amount: '1000',
    });
    expect(runCount()).toBe(before.runs + 1);
    expect(await base.balance(payer.address)).toBe(before.payer - 1000n);
  });

  it('answers 412 permit2_allowance_required to a payer who never approved Permit2, without running the tool', async () => {
    const before = runCount();
    const res = await pay(await officialUptoPayment(base.payers[6]!, await challenge(), BASE_MAINNET));
    expect(res.status).toBe(412);
    expect(((await res.json()) as { error: string }).error).toBe('permit2_allowance_required');
    expect(runCount()).toBe(before);
  });

  it('refuses tampered authorizations with their reason and never runs the tool', async () => {
    const payer = base.payers[2]!;
    const official = await officialUptoPayment(payer, await challenge(), BASE_MAINNET);
    const cases: [PaymentPayload, number, string][] = [
      [
        await resignUpto(payer, official, (a) => void (a.witness.to = base.payers[3]!.address)),
        402,
        'invalid_permit2_recipient_mismatch',
      ],
      [
        await resignUpto(payer, official, (a) => void (a.witness.facilitator = base.payers[3]!.address)),
        402,
        'upto_facilitator_mismatch',
      ],
      [await resignUpto(payer, official, (a) => void (a.permitted.amount = '999')), 402, 'permit2_amount_mismatch'],
      // A client that lowers the advertised maximum no longer echoes our entry.
      [{ ...official, accepted: { ...official.accepted, amount: '999' } }, 402, 'no_matching_payment_requirements'],
      [
        {
          ...official,
          accepted: {
            ...official.accepted,
            extra: { ...official.accepted.extra, facilitatorAddress: base.payers[3]!.address },
          },
        },
        402,
        'no_matching_payment_requirements',
      ],
    ];
    const before = { runs: runCount(), payer: await base.balance(payer.address) };
    for (const [payment, status, reason] of cases) {
      const res = await pay(payment);
      expect(res.status, reason).toBe(status);
      expect(((await res.json()) as { error: string }).error).toBe(reason);
    }
    expect(runCount()).toBe(before.runs);
    expect(await base.balance(payer.address)).toBe(before.payer);
  });

  it('refuses the same authorization sent again: one execution, one settlement', async () => {
    const payer = base.payers[3]!;
    const payment = await officialUptoPayment(payer, await challenge(), BASE_MAINNET);
    const before = { runs: runCount(), payer: await base.balance(payer.address) };
    expect((await pay(payment)).status).toBe(200);
    const again = await pay(payment);
    expect(again.status).toBe(402);
    expect(((await again.json()) as { error: string }).error).toBe('payment_already_used');
    const overMcp = await mcp.callTool({ name: 'annuity', arguments: args, _meta: { 'x402/payment': payment } });
    expect(overMcp.isError).toBe(true);
    expect(runCount()).toBe(before.runs + 1);
    expect(await base.balance(payer.address)).toBe(before.payer - 1000n);
  });

  it('lets 5 concurrent copies of one authorization buy exactly one execution and one settlement', async () => {
    const payer = base.payers[4]!;
    const payment = await officialUptoPayment(payer, await challenge(), BASE_MAINNET);
    const before = { runs: runCount(), payer: await base.balance(payer.address) };
    const answers = await Promise.all(Array.from({ length: 5 }, () => pay(payment)));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    // 409 answers carry the error body ({ error: { code } }), 402 answers the challenge ({ error: reason }).
    const refusals = await Promise.all(
      answers.filter((r) => r.status !== 200).map(async (r) => reasonOf(await r.json())),
    );
    for (const reason of refusals) expect(['payment_in_flight', 'payment_already_used']).toContain(reason);
    expect(runCount()).toBe(before.runs + 1);
    expect(await base.balance(payer.address)).toBe(before.payer - 1000n);
    expect(await permit2NonceUsed(base.chain, payer.address, BigInt(uptoAuthorization(payment).nonce))).toBe(true);
  });

  it('refuses a Permit2 deadline ten years or 2^256−1 ahead before claiming or verifying it, and takes the official one', async () => {
    const payer = base.payers[5]!;
    const watch = watchPaymentPath(server.runtime);
    const before = { runs: runCount(), payer: await base.balance(payer.address), ...watch };
    for (const deadline of [nowSeconds() + TEN_YEARS_SECONDS, UINT256_MAX]) {
      const official = await officialUptoPayment(payer, await challenge(), BASE_MAINNET);
      const long = await resignUpto(payer, official, (a) => void (a.deadline = deadline.toString()));
      await expectWindowRefused(await pay(long), 300);
    }
    expect({ ...watch }).toEqual({ claims: before.claims, verifies: before.verifies });
    expect(runCount()).toBe(before.runs);
    expect((await pay(await officialUptoPayment(payer, await challenge(), BASE_MAINNET))).status).toBe(200);
    expect({ ...watch }).toEqual({ claims: before.claims + 1, verifies: before.verifies + 1 });
    expect(await base.balance(payer.address)).toBe(before.payer - 1000n);
  });
});
