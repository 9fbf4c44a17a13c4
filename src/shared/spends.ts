/** The agent's spending ledger (remote mode, `tollbooth call`): its daily budget and spending history. */
import type { AgentChannelBook } from './agent-channels.js';
import type { Logger } from './log.js';

/** The payment protocol a paid call used: x402, or the Machine Payments Protocol (`Authorization: Payment`). */
export type PaymentProtocol = 'x402' | 'mpp';

/** Where a payment made by the agent side stands; claimed (`reserved`), settled and pending count against the budget. */
export type SpendStatus = 'reserved' | 'settled' | 'pending' | 'failed' | 'cancelled';

/** The chain's word on a payment the seller reported settled: its authorization used (`confirmed`) or still unused (`not_seen`). */
export type ChainCheck = 'confirmed' | 'not_seen';

/** One payment the agent side made or is making, kept for its daily budget and its spending history. */
export interface SpendRecord {
  id: string;
  /** The UTC day (YYYY-MM-DD) it counts against. */
  day: string;
  tool: string;
  /** The URL paid for. */
  resource: string;
  /** The seller's origin (`https://host:port`), counted against its own per-origin caps (absent when written before them). */
  origin?: string;
  /** The address the payment goes to (absent when written before it was kept). */
  payTo?: string;
  /** Hash of the tool and its canonical input: a call whose outcome is unknown is found again by it. */
  requestHash: string;
  network: string;
  asset: string;
  /** Amount in the asset's smallest units. */
  amount: string;
  /** The same in millionths of a US dollar (stablecoins at par), rounded up. */
  usdMicros: number;
  status: SpendStatus;
  /** The protocol it was paid with (absent when written before MPP: x402). */
  protocol?: PaymentProtocol;
  /**
   * A batch-settlement `deposit` (its `usdMicros` is what is still committed) or a call paid by `voucher` from one
   * (src/shared/agent-channels.ts); absent for a payment of its own.
   */
  kind?: 'deposit' | 'voucher';
  /** The `payment-identifier` id sent with the payment, when the server declared the extension. */
  paymentId?: string;
  payer?: string;
  transaction?: string;
  /** Why it failed, was cancelled or is still pending. */
  note?: string;
  /**
   * The signed payment, kept while its outcome is unknown (pending) so a retry sends the very same one, and on a
   * settled payment until the chain confirms it (what a later re-check of its receipt reads).
   */
  payload?: unknown;
  /** What the chain said of a settled payment's authorization after the seller reported success (absent: not checked). */
  chainCheck?: ChainCheck;
  createdAt: string;
  updatedAt: string;
}

/** A payment about to be made, before its outcome is known. */
export type NewSpend = Omit<
  SpendRecord,
  'status' | 'payer' | 'transaction' | 'note' | 'payload' | 'chainCheck' | 'createdAt' | 'updatedAt'
>;

/** How a claimed or pending payment ended (or that it is still pending, with the payment to retry with). */
export interface SpendUpdate {
  status: 'settled' | 'pending' | 'failed';
  payer?: string;
  transaction?: string;
  note?: string;
  /** Pending: the payment to retry with; settled: the payment its on-chain receipt check reads (kept until confirmed). */
  payload?: unknown;
}

/** Result of claiming a payment against the daily budget; `spentMicros` is the day's counted total afterwards. */
export type SpendClaimResult =
  | { type: 'reserved'; spentMicros: number }
  /** `originSpentMicros`: the origin's counted total of the day, when a per-origin day limit was given. */
  | { type: 'over_budget'; spentMicros: number; originSpentMicros?: number };

/** The pay-to address the agent pinned for a seller's origin on one network (at its first payment there). */
export interface PayToPin {
  origin: string;
  network: string;
  payTo: string;
  /** The payment that holds the pin until it goes out (its release drops the pin, or puts back the one it replaced). */
  spendId?: string;
}

/** The agent's payments: claimed against the daily budget before paying, completed or released after. */
export interface SpendLedger {
  /**
   * Atomically records a payment as claimed (`reserved`) if the day's counted total (reserved, settled, pending) plus
   * its amount stays within `dayLimitMicros` and, given `originDayLimitMicros`, the day's total of the spend's origin
   * within it too; concurrent claims can never exceed either limit together.
   */
  claimSpend(spend: NewSpend, dayLimitMicros: number, originDayLimitMicros?: number): Promise<SpendClaimResult>;
  /** Millionths of a US dollar the origin's payments count against `day` (reserved, settled and pending). */
  originSpentOn(origin: string, day: string): Promise<number>;
  /** The dollars (millionths) of the latest settled payment for this tool at this origin and URL path, if any. */
  lastSettledPrice(tool: string, origin: string, path: string): Promise<number | undefined>;
  /** The pay-to pinned for an origin on a network, if any. */
  payToPin(origin: string, network: string): Promise<string | undefined>;
  /** Pins a pay-to (`replace`: over an existing pin, once the user approved the change); returns the pin now stored. */
  pinPayTo(pin: PayToPin, replace: boolean): Promise<string>;
  /** Ends a claimed or pending payment as settled or failed, or keeps it pending with the payment to retry with. */
  completeSpend(id: string, update: SpendUpdate): Promise<void>;
  /**
   * Records what the chain said of a settled payment's authorization (receipt-check.ts); a `confirmed` check, or a
   * `final` one (the authorization expired unused), drops the signed payment kept for re-checks.
   */
  setChainCheck(id: string, check: ChainCheck, final?: boolean): Promise<void>;
  /**
   * Settled payments whose receipt may still be re-checked (a signed payment kept, not confirmed: `not_seen` or not
   * checked yet), at most `limit`, the longest unchanged first.
   */
  spendsToRecheck(limit: number): Promise<SpendRecord[]>;
  /** Marks a claimed or pending payment as never made (no charge happened), giving its amount back to the budget. */
  releaseSpend(id: string, note: string): Promise<void>;
  /** The agent's payments, most recent first; optionally only some statuses. */
  listSpends(options?: { limit?: number; statuses?: readonly SpendStatus[] }): Promise<SpendRecord[]>;
  /** Millionths of a US dollar counted against the budget of `day` (reserved, settled and pending payments). */
  spentOn(day: string): Promise<number>;
  /** The most recent pending payment (outcome unknown) for a request, to be retried instead of paying again. */
  pendingSpend(requestHash: string): Promise<SpendRecord | undefined>;
}

/** An opened spending ledger and the closing of the database under it. */
export interface SpendStore {
  spends: SpendLedger;
  /** The agent's batch-settlement channels; without it the agent does not pay with batch-settlement. */
  agentChannels?: AgentChannelBook;
  close(): Promise<void>;
}

/** Where the spending ledger is kept: the same store settings as a server's (DATA_DIR, DATABASE_URL). */
export interface SpendStoreSettings {
  dataDir: string;
  databaseUrl?: string;
}

/** Opens the spending ledger where `settings` say: the composition root gives the agent side the store's opener. */
export type OpenSpends = (settings: SpendStoreSettings, log: Logger) => Promise<SpendStore>;
