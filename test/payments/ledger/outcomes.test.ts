import type { SettleResponse } from '@x402/core/types';
import { describe, expect, it } from 'vitest';
import { pendingReceipt } from '../../../src/payments/ledger/outcomes.js';

const network = 'eip155:8453';

describe('the receipt of a settlement whose outcome is open', () => {
  it('keeps settlement_pending when the receipt names the broadcast transaction, and fills in the network if missing', () => {
    const pending = {
      success: false,
      errorReason: 'settlement_pending',
      transaction: '0xabc',
      network,
    } as SettleResponse;
    expect(pendingReceipt(pending, network)).toEqual(pending);
    const noNetwork = {
      success: false,
      errorReason: 'settlement_pending',
      transaction: '0xabc',
      network: '',
    } as unknown as SettleResponse;
    expect(pendingReceipt(noNetwork, network)).toMatchObject({
      errorReason: 'settlement_pending',
      transaction: '0xabc',
      network,
    });
  });

  it('turns settlement_pending without a transaction hash into settlement_outcome_unknown', () => {
    const hashless = { success: false, errorReason: 'settlement_pending', transaction: '', network } as SettleResponse;
    expect(pendingReceipt(hashless, network)).toEqual({ ...hashless, errorReason: 'settlement_outcome_unknown' });
  });

  it('leaves settled and failed receipts alone', () => {
    const settled = { success: true, transaction: '0xabc', network } as SettleResponse;
    const failed = {
      success: false,
      errorReason: 'invalid_exact_evm_insufficient_balance',
      transaction: '',
      network,
    } as SettleResponse;
    expect(pendingReceipt(settled, network)).toBe(settled);
    expect(pendingReceipt(failed, network)).toBe(failed);
  });
});
