import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { threadId } from 'node:worker_threads';
import { FacilitatorTimeoutError } from '@x402/core/server';
import { SettleError, VerifyError, type PaymentRequired, type PaymentRequirements } from '@x402/core/types';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { rebuildError } from '../../../src/payments/facilitators/facilitator-thread.js';
import { createRuntime, listen, type RunningServer, type Runtime } from '../../../src/runtime/runtime.js';
import type { AnyToolDefinition } from '../../../src/tool/tool.js';
import { annuity } from '../../../tools/annuity.js';
import { countingTools, LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../../support/paid.js';
import { encodePayment, signExactPayment } from '../../support/payer.js';
import { silentLogger } from '../../../src/shared/log.js';
import { decodeHeader } from '../../support/server.js';

const HOOKED_ENTRY = {
  filename: new URL('../../support/hooked-facilitator-worker.ts', import.meta.url).href,
  execArgv: ['--import', 'tsx'],
};
const body = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });

let paid: PaidEnvironment;
beforeAll(async () => {
  paid = await startPaidEnvironment(4);
}, 120_000);
afterAll(async () => {
  await paid?.stop();
});

/** A Tollbooth settling in-process (on its facilitator thread, started from the hooked test entry), counted tool runs. */
async function startServer(): Promise<{ runtime: Runtime; server: RunningServer; runs: Map<string, number> }> {
  const dir = mkdtempSync(join(tmpdir(), 'tollbooth-facilitator-thread-'));
  const config = loadConfig({ ...paid.env, DATA_DIR: dir, LOG_LEVEL: 'silent' });
  const counted = countingTools([annuity] as AnyToolDefinition[]);
  const runtime = await createRuntime(config, {
    log: silentLogger,
    tools: counted.tools,
    facilitatorEntry: HOOKED_ENTRY,
  });
  const server = await listen(runtime, 0, '127.0.0.1');
  cleanups.push(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { runtime, server, runs: counted.runs };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  delete process.env.TOLLBOOTH_TEST_VERIFY_ERROR;
  delete process.env.TOLLBOOTH_TEST_SETTLE_GATE;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function entryOf(url: string): Promise<PaymentRequirements> {
  const res = await fetch(url + '/api/annuity', { method: 'POST' });
  const challenge = decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
  return challenge.accepts.find((a) => a.network === LOCAL_NETWORK)!;
}

async function pay(url: string, payer: number): Promise<Response> {
  const payment = await signExactPayment(paid.payers[payer]!, await entryOf(url));
  return fetch(url + '/api/annuity', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body,
  });
}

describe('the in-process facilitator on its own thread', () => {
  it('verifies and settles on a thread other than the event loop’s, and pays exactly the price', async () => {
    const { runtime, server } = await startServer();
    const thread = runtime.facilitator.thread!;
    const before = await paid.balance(paid.payTo);
    const res = await pay(server.url, 0);
    expect(res.status).toBe(200);
    expect(await paid.balance(paid.payTo)).toBe(before + 1000n);
    // The thread counts what it ran itself: the call's verification and settlement happened there.
    const stats = await thread.stats();
    expect(stats.threadId).not.toBe(threadId);
    expect(stats.threadId).toBe(thread.threadId);
    expect(stats).toMatchObject({ verify: 1, settle: 1 });
  });

  it('answers a VerifyError thrown on the thread as the same 402 reason, without running the tool', async () => {
    process.env.TOLLBOOTH_TEST_VERIFY_ERROR = 'invalid_exact_evm_payload_signature';
    const { server, runs } = await startServer();
    const res = await pay(server.url, 1);
    expect(res.status).toBe(402);
    const challenge = decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
    expect(challenge.error).toBe('invalid_exact_evm_payload_signature');
    expect(runs.get('annuity')).toBeUndefined();
  });

  it('leaves a settlement in doubt when the thread dies with it in hand, never sends it again, and serves the next call on a new thread', async () => {
    const gate = join(mkdtempSync(join(tmpdir(), 'tollbooth-gate-')), 'open');
    process.env.TOLLBOOTH_TEST_SETTLE_GATE = gate;
    const { runtime, server, runs } = await startServer();
    const thread = runtime.facilitator.thread!;
    const first = thread.threadId;
    const payer = paid.payers[2]!;
    const before = { payer: await paid.balance(payer.address), payTo: await paid.balance(paid.payTo) };

    const answer = pay(server.url, 2);
    // Bounded by work: the settlement reached the thread (which waits at the gate) before the thread is ended.
    while ((await thread.stats()).settle === 0) await sleep(20);
    await thread.terminate();
    const res = await answer;
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: { code: 'settlement_outcome_unknown' } });
    expect(runs.get('annuity')).toBe(1);
    const pending = await runtime.store.ledger.listPending();
    expect(pending.map((p) => p.payer)).toEqual([payer.address]);
    expect(await paid.balance(payer.address)).toBe(before.payer);

    writeFileSync(gate, '');
    expect(existsSync(gate)).toBe(true);
    const next = await pay(server.url, 3);
    expect(next.status).toBe(200);
    const stats = await thread.stats();
    expect(stats.threadId).not.toBe(first);
    // The new thread settled the next call only: the one in doubt was not sent again.
    expect(stats).toMatchObject({ verify: 1, settle: 1 });
    expect(await paid.balance(payer.address)).toBe(before.payer);
    expect(await paid.balance(paid.payTo)).toBe(before.payTo + 1000n);
  });
});

describe('errors crossing from the facilitator thread', () => {
  it('are rebuilt as the x402 classes the broker tells apart, with their fields; others as plain errors', () => {
    const verify = rebuildError({
      name: 'VerifyError',
      message: 'x',
      fields: {
        statusCode: 400,
        invalidReason: 'invalid_exact_evm_payload_signature',
        invalidMessage: 'bad',
        payer: '0x1',
      },
    });
    expect(verify).toBeInstanceOf(VerifyError);
    expect(verify).toMatchObject({ invalidReason: 'invalid_exact_evm_payload_signature', invalidMessage: 'bad' });
    const settle = rebuildError({
      name: 'SettleError',
      message: 'x',
      fields: { statusCode: 400, errorReason: 'transaction_failed', transaction: '0xab', network: LOCAL_NETWORK },
    });
    expect(settle).toBeInstanceOf(SettleError);
    expect(settle).toMatchObject({ errorReason: 'transaction_failed', transaction: '0xab' });
    const timeout = rebuildError({
      name: 'FacilitatorTimeoutError',
      message: 'x',
      fields: { operation: 'settle', timeoutMs: 5 },
    });
    expect(timeout).toBeInstanceOf(FacilitatorTimeoutError);
    const other = rebuildError({ name: 'EvmRpcUnavailableError', message: 'the RPC failed', fields: {} });
    expect(other.constructor).toBe(Error);
    expect(other.message).toBe('the RPC failed');
  });

  it('start no thread when no family has a settlement key', async () => {
    const { createFacilitator } = await import('../../../src/payments/facilitators/facilitator.js');
    const facilitator = await createFacilitator(loadConfig({}));
    expect(facilitator.thread).toBeUndefined();
    await facilitator.close();
  });
});
