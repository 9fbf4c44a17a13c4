/**
 * The official server scheme's check of a plain voucher, with the signature recovered natively (./voucher-signer.ts).
 * The scheme checks a voucher locally when the channel's mirror of the chain is fresh: the channel config binds the
 * channel id and matches the requirements, the cumulative amount is ours plus the price, the payer-authorizer signed
 * it, and it is within the balance and above what was claimed. This hook takes exactly that case, and only when every
 * check passes: the channel config must equal the one stored when the channel was first verified (so it binds the
 * same id), and the signer must be the payer-authorizer. It then records what the official hook records (the
 * request's channel, reservation id and snapshot, a local verification) and answers as it would. Anything else —
 * deposits, refunds, stale mirrors, a mismatch, a signature that is not the payer-authorizer's, a platform without the
 * native binding — goes to the official hook, which decides as before; so this can only make an accepted voucher
 * cheaper, never accept one the official check would refuse.
 */
import type { PaymentPayload, PaymentRequirements, VerifyResponse } from '@x402/core/types';
import { isBatchSettlementVoucherPayload, type ChannelConfig } from '@x402/evm';
import type { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/server';
import { voucherSigner } from './voucher-signer.js';
import { randomText } from '../random-pool.js';

/** The hook's context, as far as this check reads it. */
interface VerifyContext {
  paymentPayload: PaymentPayload;
  requirements: PaymentRequirements;
}

type BeforeVerify = (ctx: VerifyContext) => Promise<unknown>;

/** A channel the scheme's storage holds. */
type Stored = NonNullable<Awaited<ReturnType<ReturnType<BatchSettlementEvmScheme['getStorage']>['get']>>>;

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
const same = (a: unknown, b: unknown) =>
  typeof a === 'string' && typeof b === 'string' && a.toLowerCase() === b.toLowerCase();

/** Replaces the scheme's before-verify hook by this check in front of the official one (see the module comment). */
export function checkVouchersNatively(scheme: BatchSettlementEvmScheme): void {
  const hooks = scheme.schemeHooks as { onBeforeVerify?: BeforeVerify };
  const official = hooks.onBeforeVerify;
  if (!official) return;
  hooks.onBeforeVerify = async (ctx) => (await localVoucher(scheme, ctx)) ?? official(ctx);
}

/** The hook's answer for a voucher every local check accepts, else undefined (the official hook decides). */
async function localVoucher(scheme: BatchSettlementEvmScheme, ctx: VerifyContext) {
  const { paymentPayload: payload, requirements } = ctx;
  const raw = payload.payload;
  if (!isBatchSettlementVoucherPayload(raw)) return undefined;
  const chainId = evmChainId(requirements.network);
  if (chainId === undefined) return undefined;
  const now = Date.now();
  const channel = await scheme.getStorage().get(raw.voucher.channelId);
  if (!channel || channel.onchainSyncedAt === undefined) return undefined;
  if (now - channel.onchainSyncedAt > scheme.getOnchainStateTtlMs()) return undefined;
  if (!same(channel.channelId, raw.voucher.channelId) || !sameConfig(channel.channelConfig, raw.channelConfig)) {
    return undefined;
  }
  if (!configFits(raw.channelConfig, requirements)) return undefined;
  const max = BigInt(raw.voucher.maxClaimableAmount);
  if (max !== BigInt(channel.chargedCumulativeAmount) + BigInt(requirements.amount)) return undefined;
  if (max > BigInt(channel.balance) || max <= BigInt(channel.totalClaimed)) return undefined;
  const signer = voucherSigner(raw.voucher, chainId);
  if (!signer || !same(signer, raw.channelConfig.payerAuthorizer)) return undefined;
  return accepted(scheme, payload, channel, raw.channelConfig.payer);
}

/** Records the request as the official hook does for a locally verified voucher, and its valid verify answer. */
function accepted(scheme: BatchSettlementEvmScheme, payload: PaymentPayload, channel: Stored, payer: string) {
  const pendingId = `0x${randomText(32, 'hex')}`;
  scheme.mergeRequestContext(payload, { channelId: channel.channelId, pendingId, channelSnapshot: channel });
  scheme.mergeRequestContext(payload, { localVerify: true });
  const result: VerifyResponse = {
    isValid: true,
    payer,
    extra: {
      channelId: channel.channelId,
      balance: channel.balance,
      totalClaimed: channel.totalClaimed,
      withdrawRequestedAt: channel.withdrawRequestedAt,
      refundNonce: channel.refundNonce.toString(),
    },
  };
  return { skip: true as const, result };
}

/** The same channel config field for field (addresses in any case). */
function sameConfig(a: ChannelConfig, b: ChannelConfig): boolean {
  return (
    same(a.payer, b.payer) &&
    same(a.payerAuthorizer, b.payerAuthorizer) &&
    same(a.receiver, b.receiver) &&
    same(a.receiverAuthorizer, b.receiverAuthorizer) &&
    same(a.token, b.token) &&
    same(a.salt, b.salt) &&
    a.withdrawDelay === b.withdrawDelay
  );
}

/** The config is for these requirements: our pay-to, receiver-authorizer, asset and withdraw delay; a real authorizer. */
function configFits(config: ChannelConfig, requirements: PaymentRequirements): boolean {
  const extra = requirements.extra as { receiverAuthorizer?: unknown; withdrawDelay?: unknown } | undefined;
  if (same(config.payerAuthorizer, ZERO_ADDRESS) || same(extra?.receiverAuthorizer, ZERO_ADDRESS)) return false;
  if (!same(config.receiver, requirements.payTo) || !same(config.token, requirements.asset)) return false;
  if (!same(config.receiverAuthorizer, extra?.receiverAuthorizer)) return false;
  return extra?.withdrawDelay === undefined || config.withdrawDelay === Number(extra.withdrawDelay);
}

/** The chain id of an `eip155:<id>` network. */
function evmChainId(network: string): number | undefined {
  const match = /^eip155:([0-9]{1,12})$/.exec(network);
  return match ? Number(match[1]) : undefined;
}
