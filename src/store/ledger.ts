/** The payment ledger: what the broker and the reconciler keep about payments (claims, pending settlements, receipts, idempotency). */
import type { PaymentProtocol } from '../shared/spends.js';

/** Which receipts {@link PaymentLedger.listReceipts} returns: at most `limit` (100), created since `since`, of `kinds`. */
export interface ReceiptQuery {
  limit?: number;
  since?: string;
  kinds?: readonly ReceiptKind[];
}

/** The kind of a receipt: an `exact`/`upto` transfer, or which batch-settlement step it records. */
export type ReceiptKind = 'transfer' | 'voucher' | 'deposit' | 'claim' | 'settle' | 'refund';

/** The transport a paid call arrived on. */
export type Transport = 'http' | 'mcp';

/** A time after every claim's last touch: {@link PaymentLedger.listStaleClaims} of it lists every claim still `claimed`. */
export const EVERY_CLAIM = '9999-12-31T23:59:59.999Z';

/** What the replay guard records when a payment is claimed. */
export interface PaymentClaim {
  /** What the chain itself makes single-use (see each rail's `identify`). */
  replayKey: string;
  tool: string;
  network: string;
  payer: string;
  amount: string;
  transport: Transport;
  /** The protocol the payment arrived in; absent means x402 (read back, it is always set). */
  protocol?: PaymentProtocol;
  /** What the payment paid for, kept with the claim so a claim abandoned by a crash can still be reconciled. */
  details?: ClaimDetails;
  /**
   * False when nothing settles this claim before a later durable write to the same store (a batch-settlement
   * voucher): the sync the claim otherwise starts at once, ahead of its settlement, is then left to that write.
   */
  syncEarly?: boolean;
  /** The process whose call holds a voucher's claim (src/payments/batch/owner.ts); absent for other payments. */
  owner?: string;
}

/** The payment and request a claim is for (JSON). */
export interface ClaimDetails {
  payload: unknown;
  requirements: unknown;
  requestHash: string;
}

/** A settlement outcome kept for the operator and the payer. */
export interface ReceiptRecord {
  replayKey: string;
  tool: string;
  network: string;
  payer: string;
  amount: string;
  transaction: string;
  status: 'settled' | 'failed';
  errorReason?: string;
  transport: Transport;
  /** The protocol the payment arrived in; absent means x402 (read back, it is always set). */
  protocol?: PaymentProtocol;
  /** What the receipt records: a `transfer` (exact, upto; absent means it) or a batch-settlement step. */
  kind?: ReceiptKind;
  /** A channel receipt's channel id and the cumulative amount its voucher signed (a voucher has no transaction). */
  channelId?: string;
  cumulativeAmount?: string;
  createdAt: string;
}

/** Everything needed to finish a call whose settlement outcome was unknown when it ended. */
export interface PendingDetails {
  /** Transaction id reported so far ('' when none). */
  transaction: string;
  /** The payment payload and the requirements it was verified against (JSON). */
  payload: unknown;
  requirements: unknown;
  /** Hash of the request (tool + canonical input) the payment paid for. */
  requestHash: string;
  /** The handler's output, kept so a reconciled payment still delivers what it paid for. */
  output: unknown;
}

/** A claim whose settlement is pending, as stored. */
export interface PendingRecord extends PaymentClaim, PendingDetails {
  createdAt: string;
  updatedAt: string;
}

/** Result of claiming a payment in the replay guard. */
export type PaymentClaimResult =
  | { type: 'claimed' }
  | { type: 'in_flight' }
  | { type: 'pending'; pending: PendingRecord }
  | { type: 'spent'; transaction: string; undelivered?: Undelivered };

/** The output of a call whose settlement was confirmed only later, kept so a retry of the same request still receives it. */
export interface Undelivered {
  requestHash: string;
  output: unknown;
}

/** A successful call kept for idempotent retries: the checked output and the settlement receipt (JSON). */
export interface StoredResult {
  output: unknown;
  receipt: Record<string, unknown>;
}

/** What an idempotency record binds: the client's id to one request and one payment. */
export interface IdempotencyClaim {
  /** The `payment-identifier` id (16–128 of [A-Za-z0-9_-]). */
  id: string;
  tool: string;
  /** Hash of tool + canonical input. */
  requestHash: string;
  /** Replay key of the payment that came with the id. */
  replayKey: string;
  /** ISO time after which the record is forgotten and the id may be reused. */
  expiresAt: string;
}

/** Result of claiming an idempotency id. */
export type IdempotencyClaimResult =
  | { type: 'new' }
  | { type: 'in_flight' }
  | { type: 'done'; result: StoredResult }
  | { type: 'conflict'; reason: 'different_request' | 'different_payment' };

/**
 * The replay guard, pending settlements, receipts and idempotency records: what the broker and the reconciler use.
 * Each single-use thing goes claim → complete (or release, which makes it usable again).
 */
export interface PaymentLedger {
  /** Atomically claims a payment; only one caller ever gets `claimed` for a replay key. */
  claimPayment(claim: PaymentClaim): Promise<PaymentClaimResult>;
  /**
   * Marks a claimed or pending payment as spent and stores its receipt, in one transaction; a pending payment keeps
   * its request hash and output, returned later as `undelivered` by `claimPayment`. Only whoever moves the claim on
   * writes the receipt (a payment completed twice keeps one); a payment never claimed here is recorded as spent.
   */
  completePayment(receipt: ReceiptRecord): Promise<void>;
  /** Releases a `claimed` payment that did not settle, so the same authorization may be used again. */
  releasePayment(replayKey: string): Promise<void>;
  /** Marks a claimed payment whose settlement outcome is unknown as pending; it stays unusable until reconciled. */
  markPaymentPending(replayKey: string, details: PendingDetails): Promise<void>;
  /** Ends a pending payment that never settled: releases the claim and stores the failed receipt, in one transaction. */
  releasePending(receipt: ReceiptRecord): Promise<void>;
  /** Pending settlements, oldest first. */
  listPending(): Promise<PendingRecord[]>;
  /**
   * Claims still `claimed` (their call never ended: the process stopped) and last touched before `before`, with
   * their details, oldest first; `output` is undefined (it was never known).
   */
  listStaleClaims(before: string): Promise<PendingRecord[]>;
  /** Stores a receipt of a failed settlement (the claim is released separately). */
  recordReceipt(receipt: ReceiptRecord): Promise<void>;
  /** Receipts, most recent first; with `since` (ISO time) only those created since then, with `kinds` only those. */
  listReceipts(options?: ReceiptQuery): Promise<ReceiptRecord[]>;
  /** Claims an idempotency id: new (now in flight), still in flight, done with its stored result, or a conflict. Expired records count as absent. */
  claimIdempotency(claim: IdempotencyClaim): Promise<IdempotencyClaimResult>;
  /** Stores the result of the call an in-flight id belongs to. */
  completeIdempotency(id: string, result: StoredResult): Promise<void>;
  /** Forgets an in-flight id whose call did not succeed (nothing charged), so the client may retry with it. */
  releaseIdempotency(id: string): Promise<void>;
  /** Deletes idempotency records that expired before `now`; returns how many. */
  purgeIdempotency(now: string): Promise<number>;
  /**
   * Resolves once every write made so far survives a power loss. The broker waits for it between a claim and its
   * settlement: a settled payment is then always found again (and its receipt rebuilt from the chain) after a crash.
   */
  durable(): Promise<void>;
}
