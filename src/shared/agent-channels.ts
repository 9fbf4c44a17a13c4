/**
 * The agent's batch-settlement channels as the store keeps them: the client state the official scheme reads and
 * writes (its `ClientChannelStorage` records, so a channel survives restarts), what each channel paid for, and the
 * deposits booked against the daily budget. A deposit is a spend of kind `deposit` whose `usdMicros` is what is still
 * COMMITTED (counted against its day, not yet spent); a call paid by voucher is a spend of kind `voucher` that draws
 * its price from the committed deposits of its channel (booked on that deposit's day: the deposit already took that
 * much of that day's budget); a refund gives what is still committed back.
 */

/** The official client scheme's record of one channel (`BatchSettlementClientContext`), as stored. */
export interface ChannelContext {
  chargedCumulativeAmount?: string;
  balance?: string;
  totalClaimed?: string;
  signedMaxClaimable?: string;
  signature?: `0x${string}`;
}

/** A channel's on-chain configuration (the escrow's `ChannelConfig`), as its payments carry it. */
export interface ChannelConfigNote {
  payer: `0x${string}`;
  payerAuthorizer: `0x${string}`;
  receiver: `0x${string}`;
  receiverAuthorizer: `0x${string}`;
  token: `0x${string}`;
  withdrawDelay: number;
  salt: `0x${string}`;
}

/** What a channel pays for: noted when a call uses it, so it can be listed and refunded later. */
export interface ChannelNote {
  channelId: string;
  network: string;
  asset: string;
  payTo: string;
  /** The URL last paid through it (a refund is requested there). */
  resource: string;
  decimals: number;
  /** The escrow's configuration of the channel (the timed withdrawal is sent with it); absent on older rows. */
  channelConfig?: ChannelConfigNote;
}

/** One of the agent's channels, for `tollbooth deposits`. */
export interface AgentChannel extends Partial<Omit<ChannelNote, 'channelId'>> {
  channelId: string;
  /** The client state; absent once the scheme dropped it (a full refund). */
  context?: ChannelContext;
  /** Deposited in total, in the asset's smallest units (settled deposits). */
  deposited: string;
  /** Refunded in total, in the asset's smallest units. */
  refunded: string;
  /** Millionths of a dollar still committed against the budget. */
  committedMicros: number;
  /** Millionths of a dollar spent through vouchers. */
  spentMicros: number;
  createdAt: string;
  lastUsedAt: string;
}

/** A deposit about to be signed, claimed against the day's budget. */
export interface NewDeposit {
  id: string;
  day: string;
  tool: string;
  resource: string;
  requestHash: string;
  channelId: string;
  network: string;
  asset: string;
  /** The deposit in the asset's smallest units. */
  amount: string;
  usdMicros: number;
  /** The seller's origin and pay-to (so per-origin totals count deposits and vouchers too). */
  origin?: string;
  payTo?: string;
}

/** A voucher charge drawn from committed deposits: which deposit rows gave how much. */
export interface VoucherDraw {
  id: string;
  usdMicros: number;
  from: { depositId: string; usdMicros: number }[];
}

/** A call about to be paid by voucher. */
export type NewVoucher = Omit<NewDeposit, 'day'>;

/** The agent's channels and their deposits, in the shared store. */
export interface AgentChannelBook {
  /** The scheme's record of a channel (keys are lower-case channel ids). */
  get(channelId: string): Promise<ChannelContext | undefined>;
  /** Stores the scheme's record of a channel. */
  set(channelId: string, context: ChannelContext): Promise<void>;
  /** Drops the scheme's record of a channel (the row stays, for the listing). */
  delete(channelId: string): Promise<void>;
  /** Notes what a channel pays for and that it was just used. */
  note(note: ChannelNote): Promise<void>;
  /**
   * Claims a deposit against the day's budget and, when given, its origin's per-day cap (atomically, like a payment);
   * false when over either limit.
   */
  claimDeposit(deposit: NewDeposit, dayLimitMicros: number, originDayLimitMicros?: number): Promise<boolean>;
  /** Ends a claimed deposit: `settled` (the money is in escrow, committed) or released (never made). */
  endDeposit(
    id: string,
    outcome: { settled: true; transaction?: string } | { settled: false; note: string },
  ): Promise<void>;
  /** Books a voucher call: its price leaves the channel's committed deposits (oldest first) into a reserved spend. */
  drawVoucher(voucher: NewVoucher): Promise<VoucherDraw>;
  /** Ends a voucher call: settled at `chargedMicros` (the rest goes back to its deposit), kept pending, or released. */
  endVoucher(draw: VoucherDraw, outcome: VoucherOutcome): Promise<void>;
  /** Gives back whatever a channel still has committed (after a refund) and records the refunded amount. */
  released(channelId: string, refundedAtomic: string, note: string): Promise<void>;
  /** The agent's channels, most recently used first. */
  list(): Promise<AgentChannel[]>;
}

/** How a voucher call ended. */
export type VoucherOutcome =
  | { type: 'settled'; chargedMicros: number; amount: string; payer?: string }
  | { type: 'pending'; note: string }
  | { type: 'released'; note: string };
