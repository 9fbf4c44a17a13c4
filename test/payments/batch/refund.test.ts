import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { describe, expect, it } from 'vitest';
import { identifyChannelPayment } from '../../../src/payments/batch/kinds.js';
import { isRefundRequest, refundAcknowledgement, refundRefusal } from '../../../src/payments/batch/refund.js';
import type { BatchChannels, ChannelRecord } from '../../../src/store/channels.js';

const CHANNEL = `0x${'ab'.repeat(32)}`;
const PAYER = `0x${'12'.repeat(20)}`;
const REFUND_NO_BALANCE = 'invalid_batch_settlement_evm_refund_no_balance';
const REFUND_AMOUNT_INVALID = 'invalid_batch_settlement_evm_refund_amount_invalid';
const requirements = { network: 'eip155:8453', scheme: 'batch-settlement' } as unknown as PaymentRequirements;

/** A channel payment of a type on a cumulative amount, with an asked refund amount when given. */
function payment(type: string, max: string, amount?: string): PaymentPayload {
  const voucher = { channelId: CHANNEL, maxClaimableAmount: max, signature: '0x' };
  const payload = { type, channelConfig: { payer: PAYER }, voucher, ...(amount !== undefined && { amount }) };
  return { x402Version: 2, accepted: requirements, payload } as unknown as PaymentPayload;
}

/** The store's channels holding one channel with this balance and charged amount. */
function channels(balance: string, charged: string): BatchChannels {
  const record = { channelId: CHANNEL, balance, chargedCumulativeAmount: charged } as ChannelRecord;
  return { get: async (id: string) => (id === CHANNEL ? record : undefined) } as unknown as BatchChannels;
}

describe('batch-settlement refund requests', () => {
  it('are told apart from vouchers, with a replay key apart from the voucher that signed the same amount', () => {
    const refund = identifyChannelPayment(payment('refund', '3000'), requirements);
    const voucher = identifyChannelPayment(payment('voucher', '3000'), requirements);
    expect(refund).toEqual({ ok: true, replayKey: `batch:eip155:8453:${CHANNEL}:refund:3000:rest`, payer: PAYER });
    expect(voucher).toMatchObject({ ok: true, replayKey: `batch:eip155:8453:${CHANNEL}:3000` });
    expect(identifyChannelPayment(payment('refund', '3000', '5'), requirements)).toMatchObject({
      replayKey: `batch:eip155:8453:${CHANNEL}:refund:3000:5`,
    });
    expect(isRefundRequest(payment('refund', '3000'))).toBe(true);
    expect(isRefundRequest(payment('voucher', '3000'))).toBe(false);
    expect(refundAcknowledgement(payment('refund', '3000'))).toEqual({
      message: 'Refund acknowledged',
      channelId: CHANNEL,
    });
  });

  it('are refused when nothing is left above the charged amount, or the amount asked is none or above the rest', async () => {
    expect(await refundRefusal(channels('5000', '3000'), payment('refund', '3000'))).toBeUndefined();
    expect(await refundRefusal(channels('5000', '3000'), payment('refund', '3000', '2000'))).toBeUndefined();
    expect(await refundRefusal(channels('3000', '3000'), payment('refund', '3000'))).toBe(REFUND_NO_BALANCE);
    expect(await refundRefusal(channels('5000', '3000'), payment('refund', '3000', '2001'))).toBe(
      REFUND_AMOUNT_INVALID,
    );
    expect(await refundRefusal(channels('5000', '3000'), payment('refund', '3000', '0'))).toBe(REFUND_AMOUNT_INVALID);
  });
});
