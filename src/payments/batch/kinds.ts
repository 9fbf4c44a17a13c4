/**
 * What the rest of the server knows of x402 `batch-settlement` without loading its SDK: the scheme's name, the offer a
 * challenge is built from, how a channel payment is identified (replay key `channelId:maxClaimableAmount`, the payer)
 * and what its receipt records. The SDK part (the official server scheme on our store) is in ./seller.ts.
 */
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import type { BatchChannels } from '../../store/channels.js';
import type { LookupResult } from '../../shared/chain-lookup.js';
import type { ReceiptKind } from '../../store/ledger.js';
import type { Identified } from '../rails/rail.js';

/** The scheme's name on the wire. */
export const BATCH_SCHEME = 'batch-settlement';

/** The reason of a voucher whose cumulative amount is not ours plus the price: answered with the corrective 402. */
export const CUMULATIVE_MISMATCH = 'invalid_batch_settlement_evm_cumulative_amount_mismatch';

/** The `batch-settlement` entries a challenge may carry, built once at start-up by the official server scheme. */
export interface BatchOffer {
  /** CAIP-2 ids of the networks offered, in the network table's order. */
  readonly networks: readonly string[];
  /** The entry of a network for a price (token base units), or undefined when not offered there. */
  entry(network: string, amount: string): PaymentRequirements | undefined;
}

const HEX32 = /^0x[0-9a-fA-F]{64}$/;
const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const UINT = /^[0-9]{1,78}$/;

/** The parts of a channel payment the server reads before verifying it. */
interface ChannelPayment {
  type: 'voucher' | 'deposit' | 'refund';
  channelId: string;
  maxClaimableAmount: string;
  payer: string;
}

/** A batch-settlement voucher: its settlement is the charge committed to the channel in our own store (no money moves). */
export function isVoucherPayment(requirements: PaymentRequirements, payload: PaymentPayload): boolean {
  return requirements.scheme === BATCH_SCHEME && channelPayment(payload)?.type === 'voucher';
}

/** A channel payment's type, channel, cumulative amount and payer, or undefined when the payload is not one. */
export function channelPayment(payload: PaymentPayload): ChannelPayment | undefined {
  const raw = payload.payload as {
    type?: unknown;
    channelConfig?: { payer?: unknown };
    voucher?: { channelId?: unknown; maxClaimableAmount?: unknown };
  };
  const { type, channelConfig, voucher } = raw ?? {};
  if (type !== 'voucher' && type !== 'deposit' && type !== 'refund') return undefined;
  const payer = channelConfig?.payer;
  const channelId = voucher?.channelId;
  const max = voucher?.maxClaimableAmount;
  if (typeof payer !== 'string' || !HEX_ADDRESS.test(payer)) return undefined;
  if (typeof channelId !== 'string' || !HEX32.test(channelId)) return undefined;
  if (typeof max !== 'string' || !UINT.test(max)) return undefined;
  return { type, channelId: channelId.toLowerCase(), maxClaimableAmount: BigInt(max).toString(), payer };
}

/**
 * The payment as a claim keeps it: a voucher without the `resource` and `extensions` it echoes (a voucher is decided
 * from the channel and its own fields, never sent on; the echo is most of its bytes), anything else whole.
 */
export function claimedPayload(payload: PaymentPayload, requirements: PaymentRequirements): PaymentPayload {
  if (requirements.scheme !== BATCH_SCHEME || channelPayment(payload)?.type !== 'voucher') return payload;
  const { resource: _resource, extensions: _extensions, ...kept } = payload;
  return kept as PaymentPayload;
}

/**
 * The replay key and payer of a channel payment. A signed voucher pays once: its key is the channel and the cumulative
 * amount it signs (`batch:<network>:<channelId>:<maxClaimableAmount>`), so the same voucher committed once never pays
 * again, and a retry of a call whose answer was lost finds its stored result.
 */
export function identifyChannelPayment(payload: PaymentPayload, requirements: PaymentRequirements): Identified {
  const read = channelPayment(payload);
  if (!read)
    return {
      ok: false,
      message:
        'The batch-settlement payment lacks a `voucher` (32-byte `channelId`, numeric `maxClaimableAmount`) or a `channelConfig.payer`.',
    };
  const channel = ['batch', requirements.network, read.channelId];
  // A refund (./refund.ts) signs the charged amount, as the last voucher did: its key is apart (`…:refund:…:<asked>`).
  const rest =
    read.type === 'refund' ? ['refund', read.maxClaimableAmount, refundAsked(payload)] : [read.maxClaimableAmount];
  const replayKey = [...channel, ...rest].join(':');
  return { ok: true, replayKey, payer: read.payer };
}

/** The amount a refund request asks back (all the rest when it names none). */
function refundAsked(payload: PaymentPayload): string {
  const asked = (payload.payload as { amount?: unknown }).amount;
  return typeof asked === 'string' && UINT.test(asked) ? asked : 'rest';
}

/** True when a replay key is a channel payment's (its receipt has no transaction of its own for a voucher). */
export function isChannelKey(replayKey: string): boolean {
  return replayKey.startsWith('batch:');
}

/** The replay-key prefix of the claim loop's own operations (`batchop:<network>:<kind>:<id>`), apart from payments'. */
export const BATCH_OPERATION_PREFIX = 'batchop:';

/** The kind of a claim-loop operation's row (claim, settle or refund), or undefined when the key is not one. */
export function batchOperationKind(replayKey: string): ReceiptKind | undefined {
  if (!replayKey.startsWith(BATCH_OPERATION_PREFIX)) return undefined;
  const kind = replayKey.split(':').at(-2);
  return kind === 'claim' || kind === 'settle' || kind === 'refund' ? kind : undefined;
}

/** A channel payment's receipt as the scheme defines it: settled with no transaction, the charge in `extra`. */
export function isVoucherReceipt(requirements: PaymentRequirements, result: SettleResponse): boolean {
  return requirements.scheme === BATCH_SCHEME && result.success && !result.transaction;
}

/**
 * What a receipt of a channel payment records beside the common fields: its kind, channel id and cumulative amount;
 * nothing for a transfer (a receipt without a kind is one).
 */
export function receiptKindOf(
  payload: PaymentPayload,
  requirements: PaymentRequirements,
): { kind?: ReceiptKind; channelId?: string; cumulativeAmount?: string } {
  if (requirements.scheme !== BATCH_SCHEME) return {};
  const read = channelPayment(payload);
  if (!read) return { kind: 'voucher' };
  return { kind: read.type, channelId: read.channelId, cumulativeAmount: read.maxClaimableAmount };
}

/**
 * What the store's channel says of a voucher whose call's end was never recorded (its process stopped): charged (the
 * channel's total reached its cumulative amount, which only this voucher's commit can do) → settled, with no
 * transaction as for every voucher; its call still holding the channel (a reservation whose holder is not known to be
 * `gone`) → in doubt; else never charged → failed, so the claim is released and the same voucher can pay a retry. A
 * deposit stays in doubt (its transaction is the chain's).
 */
export async function channelVerdict(
  channels: BatchChannels,
  payload: PaymentPayload,
  gone: (holder: string | undefined) => boolean = () => false,
): Promise<LookupResult> {
  const read = channelPayment(payload);
  if (read?.type !== 'voucher') return { type: 'pending', reason: 'a deposit is decided by its transaction on chain' };
  const channel = await channels.get(read.channelId);
  const max = BigInt(read.maxClaimableAmount);
  if (channel && BigInt(channel.chargedCumulativeAmount) >= max) return { type: 'settled', transaction: '' };
  const held = channel?.pendingRequest;
  if (held?.signedMaxClaimable === read.maxClaimableAmount && held.expiresAt > Date.now() && !gone(held.owner))
    return { type: 'pending', reason: 'its call still holds the channel' };
  return { type: 'failed', reason: 'the channel was never charged for this voucher' };
}
