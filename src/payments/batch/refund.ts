/**
 * A payer's cooperative refund request (x402 `batch-settlement`, payload `type: "refund"`): a zero-charge voucher on
 * the channel's charged amount. The official server scheme's hooks reserve the channel at verification and ask that
 * the handler be skipped; the facilitator's `/settle` then sends `refundWithSignature` on chain. The broker answers
 * it with the acknowledgement below instead of running the tool, and records its receipt (kind `refund`, the hash).
 */
import type { PaymentPayload } from '@x402/core/types';
import type { BatchChannels } from '../../store/channels.js';
import { channelPayment } from './kinds.js';

/** What a refund is answered with in place of the tool's output (the body the official server scheme returns). */
export interface RefundAcknowledgement {
  message: 'Refund acknowledged';
  channelId: string;
}

/** True when a payment is a batch-settlement refund request (it buys no call: the handler never runs for it). */
export function isRefundRequest(payload: PaymentPayload): boolean {
  return channelPayment(payload)?.type === 'refund';
}

/** The acknowledgement of a refund request, as the official server scheme words it. */
export function refundAcknowledgement(payload: PaymentPayload): RefundAcknowledgement {
  return { message: 'Refund acknowledged', channelId: channelPayment(payload)?.channelId ?? '' };
}

/** The scheme's reason for a refund of a channel with nothing left above its charged amount. */
const REFUND_NO_BALANCE = 'invalid_batch_settlement_evm_refund_no_balance';
/** The scheme's reason for a refund asking nothing, or more than the rest. */
const REFUND_AMOUNT_INVALID = 'invalid_batch_settlement_evm_refund_amount_invalid';

/**
 * Why a verified refund request cannot be settled, from the channel as our store holds it (balance above the charged
 * amount, an asked amount within the rest), or undefined: refused here, it never reaches the facilitator.
 */
export async function refundRefusal(channels: BatchChannels, payload: PaymentPayload): Promise<string | undefined> {
  const read = channelPayment(payload);
  const channel = read && (await channels.get(read.channelId));
  if (!channel) return undefined;
  const rest = BigInt(channel.balance) - BigInt(channel.chargedCumulativeAmount);
  if (rest <= 0n) return REFUND_NO_BALANCE;
  const asked = (payload.payload as { amount?: unknown }).amount;
  if (asked === undefined) return undefined;
  if (typeof asked !== 'string' || !/^[0-9]{1,78}$/.test(asked)) return REFUND_AMOUNT_INVALID;
  return BigInt(asked) > 0n && BigInt(asked) <= rest ? undefined : REFUND_AMOUNT_INVALID;
}
