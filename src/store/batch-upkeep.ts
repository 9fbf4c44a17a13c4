/**
 * What the seller's claim loop and `tollbooth channels` read and take in the store besides the channels themselves:
 * a summary of each channel from the `batch_channels` columns (no JSON parsed), and named leases so that one instance
 * at a time runs a claim round (for cost only: the contract never lets a claim exceed a signed voucher).
 */

/** One channel as its columns store it; amounts are decimal strings of token base units. */
export interface ChannelSummary {
  channelId: string;
  payer: string;
  receiver: string;
  token: string;
  balance: string;
  charged: string;
  claimed: string;
  /** Epoch milliseconds of the channel's last request. */
  lastRequestAt: number;
  /** Epoch milliseconds until which a verified call holds the channel, if any. */
  pendingUntil?: number;
}

/** The summaries and leases of one database. */
export interface BatchUpkeep {
  /** Every channel's summary, by channel id. */
  summaries(): Promise<ChannelSummary[]>;
  /** Takes `name` until `until` (epoch ms) if nobody holds it at `now`; resolves whether it was taken. */
  takeLease(name: string, until: number, now: number): Promise<boolean>;
  /** Moves a lease held until `held` (epoch ms) on to `until`; false when it is no longer held until `held`. */
  renewLease(name: string, held: number, until: number): Promise<boolean>;
  /** Gives `name` back before it runs out, if it is still held until `held` (nobody else's lease is given back). */
  releaseLease(name: string, held: number): Promise<void>;
}
