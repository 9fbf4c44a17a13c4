/**
 * The seller's payment channels of the x402 `batch-settlement` scheme, as the store keeps them. The shapes mirror the
 * `Channel` and `ChannelStorage` of `@x402/evm/batch-settlement/server` field for field (src/payments/batch/storage.ts
 * proves at compile time that this part is one), so the official server scheme runs on our store unchanged.
 */

/** The immutable on-chain configuration a channel id is the hash of. */
export interface ChannelConfigRecord {
  payer: `0x${string}`;
  payerAuthorizer: `0x${string}`;
  receiver: `0x${string}`;
  receiverAuthorizer: `0x${string}`;
  token: `0x${string}`;
  withdrawDelay: number;
  salt: `0x${string}`;
}

/** A voucher reserved by a verified request whose handler has not finished yet. */
export interface PendingChannelRequest {
  pendingId: string;
  signedMaxClaimable: string;
  /** Epoch milliseconds after which the reservation no longer holds the channel. */
  expiresAt: number;
  /** The process whose call holds it (src/payments/batch/owner.ts): one known to be gone holds nothing. */
  owner?: string;
}

/** One channel as the seller sees it; amounts are decimal strings of token base units. */
export interface ChannelRecord {
  channelId: string;
  channelConfig: ChannelConfigRecord;
  /** What the seller has charged so far, cumulatively (committed only after a handler succeeded). */
  chargedCumulativeAmount: string;
  /** The highest cumulative amount the payer signed, and that voucher's signature. */
  signedMaxClaimable: string;
  signature: string;
  /** The escrow's on-chain balance and claimed total as last seen. */
  balance: string;
  totalClaimed: string;
  withdrawRequestedAt: number;
  refundNonce: number;
  /** Epoch milliseconds when the on-chain fields were last read from the chain (through the facilitator). */
  onchainSyncedAt?: number;
  /** Epoch milliseconds of the channel's last request. */
  lastRequestTimestamp: number;
  pendingRequest?: PendingChannelRequest;
}

/** What an update did: the channel as it now stands and whether it was written, left alone or deleted. */
export interface ChannelUpdateOutcome {
  channel: ChannelRecord | undefined;
  status: 'updated' | 'unchanged' | 'deleted';
}

/**
 * The channels of every instance that shares the store. `updateChannel` is atomic across all of them: the callback
 * sees the channel as stored and its result is written only if nobody wrote the channel in between (else it runs
 * again on the newer state), and a write that changes what was charged, signed or seen on chain (or creates or deletes
 * the channel) is durable before the promise resolves; a reservation or its release alone is not waited on the disk
 * (a power loss drops it, which releases the channel of a call never answered). The callback must be pure apart
 * from recording its decision, since it may run more than once; if it throws, nothing is written.
 */
export interface BatchChannels {
  get(channelId: string): Promise<ChannelRecord | undefined>;
  list(): Promise<ChannelRecord[]>;
  /** Returns `current` to leave the channel as it is, `undefined` to delete it, or a new record to store. */
  updateChannel(
    channelId: string,
    update: (current: ChannelRecord | undefined) => ChannelRecord | undefined,
  ): Promise<ChannelUpdateOutcome>;
}
