import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PaymentPayload, SettleResponse, VerifyResponse } from '@x402/core/types';
import { signVoucher } from '@x402/evm/batch-settlement/client';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/server';
import { afterAll, describe, expect, it } from 'vitest';
import { officialChannelStorage } from '../../../src/payments/batch/storage.js';
import { SqliteStore } from '../../../src/store/dialects/sqlite/store.js';
import { NETWORK, PRICE, RECEIVER, payerChannel, requirements } from '../../support/batch-channel.js';

const dir = mkdtempSync(join(tmpdir(), 'tollbooth-batch-storage-'));
const stores: SqliteStore[] = [];
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

const MISMATCH = 'invalid_batch_settlement_evm_cumulative_amount_mismatch';
const { payer, channelConfig, channelId } = payerChannel();

/** What the facilitator's `/verify` answers for a first voucher: valid, with the escrow's on-chain state. */
const facilitatorVerified: VerifyResponse = {
  isValid: true,
  payer: payer.address,
  extra: { channelId, balance: '1000000', totalClaimed: '0', withdrawRequestedAt: 0, refundNonce: '0' },
};

/** A payment payload carrying a voucher for `max` cumulative, signed by the payer. */
async function voucher(max: string): Promise<PaymentPayload> {
  const signed = await signVoucher(payer, channelId, max, NETWORK);
  return { x402Version: 2, accepted: requirements, payload: { type: 'voucher', channelConfig, voucher: signed } };
}

/** A seller instance: the official server scheme on its own connection to the shared SQLite file. */
async function seller(file: string) {
  const store = await SqliteStore.open(join(dir, file));
  stores.push(store);
  const scheme = new BatchSettlementEvmScheme(RECEIVER, {
    storage: officialChannelStorage(store.channels),
    withdrawDelay: 900,
  });
  return { store, scheme, hooks: scheme.schemeHooks };
}

type Seller = Awaited<ReturnType<typeof seller>>;
type Step =
  | { refused: string }
  | { cancelled: true }
  | { inFlight: true }
  | { settled: SettleResponse; verifiedLocally: boolean };

/** One paid call through the scheme's hooks as the pipeline runs them: verify, the handler, then commit or cancel. */
async function call(s: Seller, payload: PaymentPayload, handler: 'succeeds' | 'fails' | 'hangs'): Promise<Step> {
  const ctx = { paymentPayload: payload, requirements, declaredExtensions: {} };
  const before = await s.hooks.onBeforeVerify!(ctx);
  if (before && 'abort' in before) return { refused: before.reason };
  const verifiedLocally = before !== undefined && 'skip' in before;
  const result = verifiedLocally ? before.result : facilitatorVerified;
  const after = await s.hooks.onAfterVerify!({ ...ctx, result });
  if (after && 'abort' in after) return { refused: after.reason };
  if (handler === 'hangs') return { inFlight: true };
  const settleCtx = { ...ctx, settledPhases: [] };
  if (handler === 'fails') {
    await s.hooks.onVerifiedPaymentCanceled!({ ...settleCtx, reason: 'handler_failed' } as never);
    return { cancelled: true };
  }
  const settled = await s.hooks.onBeforeSettle!(settleCtx as never);
  if (!settled || !('skip' in settled)) throw new Error(`the commit was refused: ${JSON.stringify(settled)}`);
  return { settled: settled.result, verifiedLocally };
}

describe('the official batch-settlement server scheme on our store', () => {
  it('commits each charge after the handler succeeded and answers with a voucher-only receipt', async () => {
    const s = await seller('commit.db');
    const first = await call(s, await voucher('1000'), 'succeeds');
    expect(first).toMatchObject({
      verifiedLocally: false,
      settled: {
        success: true,
        transaction: '',
        network: NETWORK,
        extra: { chargedAmount: PRICE, channelState: { channelId, chargedCumulativeAmount: '1000' } },
      },
    });
    // The second voucher is checked here, by signature, against the mirrored on-chain state.
    expect(await call(s, await voucher('2000'), 'succeeds')).toMatchObject({ verifiedLocally: true });
    const stored = await s.store.channels.get(channelId);
    expect(stored).toMatchObject({ chargedCumulativeAmount: '2000', signedMaxClaimable: '2000' });
    expect(stored?.pendingRequest).toBeUndefined();
  });

  it('leaves the charged amount unchanged when the handler fails, so the same voucher pays the retry', async () => {
    const s = await seller('cancel.db');
    await call(s, await voucher('1000'), 'succeeds');
    const next = await voucher('2000');
    expect(await call(s, next, 'fails')).toEqual({ cancelled: true });
    const after = await s.store.channels.get(channelId);
    expect(after?.chargedCumulativeAmount).toBe('1000');
    expect(after?.pendingRequest).toBeUndefined();
    expect(await call(s, await voucher('2000'), 'succeeds')).toMatchObject({ settled: { success: true } });
    expect((await s.store.channels.get(channelId))?.chargedCumulativeAmount).toBe('2000');
  });

  it('answers a voucher on a stale cumulative amount with the corrective 402 carrying the stored channel state', async () => {
    const s = await seller('corrective.db');
    await call(s, await voucher('1000'), 'succeeds');
    const stale = await voucher('1000');
    expect(await call(s, stale, 'succeeds')).toEqual({ refused: MISMATCH });
    const accepts = [structuredClone(requirements)];
    await s.scheme.enrichPaymentRequiredResponse({
      requirements: accepts,
      paymentPayload: stale,
      resourceInfo: { url: 'http://127.0.0.1/tools/annuity' },
      error: MISMATCH,
      paymentRequiredResponse: { x402Version: 2, resource: { url: 'http://127.0.0.1/tools/annuity' }, accepts },
    });
    expect(accepts[0]?.extra).toMatchObject({
      channelState: { channelId, chargedCumulativeAmount: '1000', balance: '1000000', totalClaimed: '0' },
      voucherState: { signedMaxClaimable: '1000' },
    });
  });

  it('refuses a second call on one channel while another instance holds it, then lets it through', async () => {
    const [a, b] = [await seller('shared.db'), await seller('shared.db')];
    await call(a, await voucher('1000'), 'succeeds');
    const held = await voucher('2000');
    expect(await call(a, held, 'hangs')).toEqual({ inFlight: true });
    expect(await call(b, await voucher('2000'), 'succeeds')).toEqual({
      refused: 'invalid_batch_settlement_evm_channel_busy',
    });
    const settled = await a.hooks.onBeforeSettle!({ paymentPayload: held, requirements, settledPhases: [] } as never);
    expect(settled).toMatchObject({ skip: true, result: { success: true } });
    expect((await b.store.channels.get(channelId))?.chargedCumulativeAmount).toBe('2000');
  });
});
