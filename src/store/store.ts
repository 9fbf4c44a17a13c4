/** The transport a paid call arrived on. */
export type Transport = 'http' | 'mcp';

/** What the replay guard records when a payment is claimed. */
export interface PaymentClaim {
  /** Replay key: what the chain itself makes single-use (see each rail's `identify`). */
  key: string;
  tool: string;
  network: string;
  payer: string;
  amount: string;
  transport: Transport;
}

/** A settlement outcome kept for the operator and the payer. */
export interface ReceiptRecord {
  key: string;
  tool: string;
  network: string;
  payer: string;
  amount: string;
  transaction: string;
  status: 'settled' | 'failed';
  errorReason?: string;
  transport: Transport;
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

/** Result of trying to claim a payment in the replay guard. */
export type ClaimResult =
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
  paymentKey: string;
  /** ISO time after which the record is forgotten and the id may be reused. */
  expiresAt: string;
}

/** Result of presenting an idempotency id. */
export type IdempotencyBegin =
  | { type: 'new' }
  | { type: 'in_flight' }
  | { type: 'done'; result: StoredResult }
  | { type: 'conflict'; reason: 'different_request' | 'different_payment' };

/** A placed social-marketing order, as kept for the payer and the operator. */
export interface OrderRecord {
  /** The panel's order id (as a string). */
  orderId: string;
  serviceId: number;
  link: string;
  quantity: number;
  /** What the caller paid, in USD. */
  chargeUsd: number;
  /** Our status word (see the smm provider's status table). */
  status: string;
  payer: string;
  /** Replay key of the payment that paid for it. */
  paymentKey: string;
  createdAt: string;
  updatedAt: string;
}

/** Result of asking for one more faucet drip. */
export type DripClaim = { type: 'granted'; count: number } | { type: 'limit_reached'; count: number };

/** Persistence for the replay guard, idempotency records, pending settlements and receipts. */
export interface Store {
  /** Atomically claims a payment; only one caller ever gets `claimed` for a key. */
  claimPayment(claim: PaymentClaim): Promise<ClaimResult>;
  /** Releases a `claimed` payment that did not settle, so the same authorization may be used again. */
  releasePayment(key: string): Promise<void>;
  /**
   * Marks a claimed or pending payment as spent and stores its receipt, in one transaction; a pending
   * payment keeps its request hash and output, returned later as `undelivered` by `claimPayment`.
   */
  completePayment(receipt: ReceiptRecord): Promise<void>;
  /** Marks a claimed payment whose settlement outcome is unknown as pending; it stays unusable until reconciled. */
  markPaymentPending(key: string, details: PendingDetails): Promise<void>;
  /** Pending settlements, oldest first. */
  listPending(): Promise<PendingRecord[]>;
  /** Ends a pending payment that never settled: stores the failed receipt and releases the claim, in one transaction. */
  failPending(receipt: ReceiptRecord): Promise<void>;
  /** Stores a receipt of a failed settlement (the claim is released separately). */
  recordReceipt(receipt: ReceiptRecord): Promise<void>;
  /** Receipts, most recent first. */
  listReceipts(options?: { limit?: number }): Promise<ReceiptRecord[]>;
  /** Presents an idempotency id: new (now in flight), still in flight, done with its stored result, or a conflict. Expired records count as absent. */
  beginIdempotent(claim: IdempotencyClaim): Promise<IdempotencyBegin>;
  /** Stores the result of the call an in-flight id belongs to. */
  finishIdempotent(id: string, result: StoredResult): Promise<void>;
  /** Forgets an in-flight id whose call did not succeed (nothing charged), so the client may retry with it. */
  abandonIdempotent(id: string): Promise<void>;
  /** Deletes idempotency records that expired before `now`; returns how many. */
  purgeExpired(now: string): Promise<number>;
  /**
   * Atomically takes one drip for `subject` (e.g. network + address) on `day` (YYYY-MM-DD, UTC) if fewer than
   * `limit` were taken; concurrent callers can never exceed the limit.
   */
  claimDrip(subject: string, day: string, limit: number): Promise<DripClaim>;
  /** Gives back a drip whose transfer did not happen. */
  releaseDrip(subject: string, day: string): Promise<void>;
  /** Stores a placed order (insert or replace by order id). */
  saveOrder(order: OrderRecord): Promise<void>;
  /** One stored order, or undefined. */
  getOrder(orderId: string): Promise<OrderRecord | undefined>;
  /** Checks that the store answers. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
