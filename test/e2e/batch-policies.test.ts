import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { generatePrivateKey } from 'viem/accounts';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../src/tool/tool.js';
import { startBatchSettlementEnvironment, type BatchSettlementEnvironment } from '../support/chain/batch-settlement.js';
import { payOverHttp } from '../support/batch-pay.js';
import { BASE_NETWORK, batchPayer } from '../support/chain/batch-settlement-parties.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { v1Echo } from '../support/tools.js';

/**
 * The fixed-option policies with BATCH_SETTLEMENT=on (src/payments/challenges/requirements.ts): a `base-short-name`
 * tool keeps its seed-form entry byte for byte and also offers the canonical `eip155:8453` batch entry, which the
 * official client pays; a `base-v1` tool's version-1 challenge is what it is with the switch off (no v1 batch scheme).
 */
let runs = 0;
const shortNamed = defineTool({
  name: 'short-named',
  title: 'Short-named',
  description: 'Test tool priced under the base-short-name policy.',
  group: 'tools',
  method: 'POST',
  path: '/api/test/short-named',
  input: z.object({}),
  output: z.object({ ok: z.boolean() }),
  pricing: { usd: '0.001', accepts: 'base-short-name' },
  annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: false },
  handler: () => {
    runs++;
    return { ok: true };
  },
});

let env: BatchSettlementEnvironment;
/** The server with the switch on, and the same server with it off (the seed's challenges). */
let on: TestServer;
let off: TestServer;

beforeAll(async () => {
  // The in-process facilitator settles every seed option (v1 `base` too) and batch-settlement on Base.
  env = await startBatchSettlementEnvironment(1);
  const tools = [shortNamed, v1Echo];
  const batch = { BATCH_SETTLEMENT: 'on', BATCH_RECEIVER_AUTHORIZER_KEY: generatePrivateKey() };
  on = await startTestServer({ ...env.env, MPP: 'off', ...batch }, { tools });
  off = await startTestServer({ ...env.env, MPP: 'off', BATCH_SETTLEMENT: 'off' }, { tools });
}, 120_000);

afterAll(async () => {
  await off?.close();
  await on?.close();
  await env?.stop();
});

/** A tool's unpaid answer from `server`, its origin replaced so two servers' challenges compare byte for byte. */
async function unpaid(server: TestServer, path: string, method: 'GET' | 'POST') {
  const init = method === 'POST' ? { body: '{}', headers: { 'content-type': 'application/json' } } : {};
  const res = await fetch(`${server.url}${path}`, { method, ...init });
  const same = (text: string | null) => text?.replaceAll(server.url, 'ORIGIN') ?? null;
  const header = res.headers.get('payment-required');
  return {
    status: res.status,
    body: same(await res.text()),
    challenge: header ? (JSON.parse(same(JSON.stringify(decodeHeader(header)))!) as PaymentRequired) : undefined,
  };
}

describe('a base-short-name tool with batch settlement on', () => {
  it('keeps its seed-form entry byte for byte and offers the canonical Base batch entry after it', async () => {
    const seed = await unpaid(off, shortNamed.path, 'POST');
    const now = await unpaid(on, shortNamed.path, 'POST');
    expect([seed.status, now.status]).toEqual([402, 402]);
    expect(seed.challenge!.accepts).toHaveLength(1);
    expect(now.challenge!.accepts).toHaveLength(2);
    expect(JSON.stringify(now.challenge!.accepts[0])).toBe(JSON.stringify(seed.challenge!.accepts[0]));
    expect(now.challenge!.accepts[0]!.network).toBe('base');
    expect(now.challenge!.accepts[1]).toMatchObject({
      scheme: 'batch-settlement',
      network: BASE_NETWORK,
      amount: '1000',
      payTo: env.payTo,
    });
  });

  it('is paid by the official client with batch-settlement: a deposit, then a voucher-only call', async () => {
    const call = payOverHttp(batchPayer(env, env.payers[0]!), `${on.url}${shortNamed.path}`);
    const first = await call();
    expect(first.status).toBe(200);
    const deposit = decodeHeader(first.headers.get('payment-response')) as SettleResponse;
    expect(deposit).toMatchObject({ success: true, network: BASE_NETWORK, extra: { chargedAmount: '1000' } });
    expect(deposit.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const second = await call();
    expect(second.status).toBe(200);
    expect(decodeHeader(second.headers.get('payment-response'))).toMatchObject({ success: true, transaction: '' });
    expect(runs).toBe(2);
    const [channel] = await on.runtime.store.channels!.list();
    expect(channel).toMatchObject({ chargedCumulativeAmount: '2000' });
  });
});

describe('a base-v1 tool with batch settlement on', () => {
  it('answers the version-1 challenge it answers with the switch off, without a batch entry', async () => {
    const seed = await unpaid(off, v1Echo.path, 'GET');
    const now = await unpaid(on, v1Echo.path, 'GET');
    expect(now).toEqual(seed);
    expect(now.status).toBe(402);
    const body = JSON.parse(now.body!) as { x402Version: number; accepts: { scheme: string }[] };
    expect(body.x402Version).toBe(1);
    expect(body.accepts.map((a) => a.scheme)).toEqual(['exact']);
  });
});
