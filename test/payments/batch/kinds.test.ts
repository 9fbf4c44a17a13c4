import type { PaymentPayload } from '@x402/core/types';
import { signVoucher } from '@x402/evm/batch-settlement/client';
import { describe, expect, it } from 'vitest';
import { claimedPayload } from '../../../src/payments/batch/kinds.js';
import { NETWORK, payerChannel, requirements } from '../../support/batch-channel.js';

const { payer, channelConfig, channelId } = payerChannel();
const echoed = {
  resource: { url: 'https://seller.example/api/annuity', description: 'd'.repeat(500), mimeType: 'application/json' },
  extensions: { bazaar: { info: { input: { type: 'http' } }, schema: { type: 'object' } } },
};

async function paying(type: 'voucher' | 'deposit'): Promise<PaymentPayload> {
  const voucher = await signVoucher(payer, channelId, '2000', NETWORK);
  const inner = type === 'voucher' ? { type, channelConfig, voucher } : { type, channelConfig, voucher, deposit: {} };
  return { x402Version: 2, accepted: requirements, payload: inner, ...echoed } as PaymentPayload;
}

describe('what a claim keeps of a payment', () => {
  it('keeps a voucher without the resource and extensions it echoes, everything it is decided by intact', async () => {
    const voucher = await paying('voucher');
    const kept = claimedPayload(voucher, requirements);
    expect(kept).toEqual({ x402Version: 2, accepted: requirements, payload: voucher.payload });
    expect(JSON.stringify(kept).length).toBeLessThan(JSON.stringify(voucher).length);
  });

  it('keeps a deposit, and a payment of another scheme, whole', async () => {
    const deposit = await paying('deposit');
    expect(claimedPayload(deposit, requirements)).toBe(deposit);
    const exact = { ...(await paying('voucher')), accepted: { ...requirements, scheme: 'exact' } } as PaymentPayload;
    expect(claimedPayload(exact, { ...requirements, scheme: 'exact' })).toBe(exact);
  });
});
