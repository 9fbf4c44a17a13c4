import type { SettleResponse } from '@x402/core/types';
import type { Receipt } from 'mppx';
import { mppx } from './lib.js';
import { MPP_METHOD } from './challenge.js';

/** An MPP receipt (mppx Receipt format) with the id of the challenge it answers, as the MCP binding carries it. */
export type MppReceipt = Receipt.Receipt & { challengeId: string };

/** The MPP receipt of a settled call: method `evm`, the settlement transaction as reference, when it was made. */
export function mppReceipt(settled: SettleResponse, challengeId: string, now = new Date()): MppReceipt {
  const receipt = mppx().Receipt.from({
    method: MPP_METHOD,
    reference: settled.transaction,
    status: 'success',
    timestamp: now.toISOString(),
  });
  return { ...receipt, challengeId };
}

/** The `Payment-Receipt` header value of a receipt (base64url JSON, as mppx writes and reads it). */
export function receiptHeader(receipt: MppReceipt): string {
  return mppx().Receipt.serialize(receipt);
}
