/**
 * One batch-settlement channel for unit tests of the seller's scheme: a CAIP-2 test network, the requirements of a
 * $0.001 call on it, and a channel config of a fresh payer (its own payer-authorizer) with its channel id.
 */
import type { PaymentRequirements } from '@x402/core/types';
import { computeChannelId } from '@x402/evm/batch-settlement/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { ChannelRecord } from '../../src/store/channels.js';

/** The network of the unit tests' channels. */
export const NETWORK = 'eip155:84532';
/** The seller's pay-to in these channels. */
export const RECEIVER = '0x00000000000000000000000000000000000000b2';
const AUTHORIZER = '0x00000000000000000000000000000000000000c3';
const TOKEN = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
/** The price of one call, token base units. */
export const PRICE = '1000';

/** The requirements of one call, as the seller's batch entry states them. */
export const requirements: PaymentRequirements = {
  scheme: 'batch-settlement',
  network: NETWORK,
  amount: PRICE,
  asset: TOKEN,
  payTo: RECEIVER,
  maxTimeoutSeconds: 60,
  extra: { name: 'USDC', version: '2', receiverAuthorizer: AUTHORIZER, withdrawDelay: 900 },
};

/** A fresh payer, the config of its channel with the seller (salt zero) and the channel's id. */
export function payerChannel() {
  const payer = privateKeyToAccount(generatePrivateKey());
  const channelConfig = {
    payer: payer.address,
    payerAuthorizer: payer.address,
    receiver: RECEIVER,
    receiverAuthorizer: AUTHORIZER,
    token: TOKEN,
    withdrawDelay: 900,
    salt: `0x${'00'.repeat(32)}`,
  } as const;
  return { payer, channelConfig, channelId: computeChannelId(channelConfig, NETWORK) };
}

/** The id of {@link channelRecord}'s channel. */
export const RECORD_ID = '0x' + 'ab'.repeat(32);

/** A stored channel record for store-level tests (fixed parties, nothing charged, 1 USDC balance), with `over` applied. */
export const channelRecord = (over: Partial<ChannelRecord> = {}): ChannelRecord => ({
  channelId: RECORD_ID,
  channelConfig: {
    payer: '0x00000000000000000000000000000000000000a1',
    payerAuthorizer: '0x00000000000000000000000000000000000000a1',
    receiver: RECEIVER,
    receiverAuthorizer: AUTHORIZER,
    token: '0x00000000000000000000000000000000000000d4',
    withdrawDelay: 900,
    salt: `0x${'00'.repeat(32)}`,
  },
  chargedCumulativeAmount: '0',
  signedMaxClaimable: '0',
  signature: '0x',
  balance: '1000000',
  totalClaimed: '0',
  withdrawRequestedAt: 0,
  refundNonce: 0,
  lastRequestTimestamp: 1,
  ...over,
});
