/** The transport a paid call arrived on. */
export type Transport = 'http' | 'mcp';

/** The payment protocol a paid call used: x402, or the Machine Payments Protocol (`Authorization: Payment`). */
export type PaymentProtocol = 'x402' | 'mpp';

/** What the replay guard records when a payment is claimed. */
export interface PaymentClaim {
  /** Replay key: what the chain itself makes single-use (see each rail's `identify`). */
  key: string;
  tool: string;
  network: string;
  payer: string;
  amount: string;
  transport: Transport;
  /** The protocol the payment arrived in; absent means x402 (read back, it is always set). */
  protocol?: PaymentProtocol;
  /** What the payment paid for, kept with the claim so a claim abandoned by a crash can still be reconciled. */
  details?: ClaimDetails;
}

/** The payment and request a claim is for (JSON). */
export interface ClaimDetails {
  payload: unknown;
  requirements: unknown;
  requestHash: string;
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
  /** The protocol the payment arrived in; absent means x402 (read back, it is always set). */
  protocol?: PaymentProtocol;
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

/** Where a payment made by the agent side (remote mode, `tollbooth call`) stands; reserved, settled and pending count against the budget. */
export type SpendStatus = 'reserved' | 'settled' | 'pending' | 'failed' | 'cancelled';

/** One payment the agent side made or is making, kept for its daily budget and its spending history. */
export interface SpendRecord {
  id: string;
  /** The UTC day (YYYY-MM-DD) it counts against. */
  day: string;
  tool: string;
  /** The URL paid for. */
  resource: string;
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
  /** The `payment-identifier` id sent with the payment, when the server declared the extension. */
  paymentId?: string;
  payer?: string;
  transaction?: string;
  /** Why it failed, was cancelled or is still pending. */
  note?: string;
  /** The signed payment, kept while its outcome is unknown (pending) so a retry sends the very same one. */
  payload?: unknown;
  createdAt: string;
  updatedAt: string;
}

/** A payment about to be made, before its outcome is known. */
export type NewSpend = Omit<
  SpendRecord,
  'status' | 'payer' | 'transaction' | 'note' | 'payload' | 'createdAt' | 'updatedAt'
>;

/** How a reserved or pending payment ended (or that it is still pending, with the payment to retry with). */
export interface SpendUpdate {
  status: 'settled' | 'pending' | 'failed';
  payer?: string;
  transaction?: string;
  note?: string;
  payload?: unknown;
}

/** Result of reserving a payment against the daily budget; `spentMicros` is the day's counted total afterwards. */
export type SpendReservation = { type: 'reserved'; spentMicros: number } | { type: 'over_budget'; spentMicros: number };

/** A request to take tokens from a shared rate-limit bucket (a token bucket kept in GCRA form, see src/limits/bucket.ts). */
export interface TokenRequest {
  /** The bucket, e.g. `ip:203.0.113.7` or `payer:0xabc…`. */
  key: string;
  /** Most tokens the bucket holds (the burst). */
  capacity: number;
  /** Tokens added back per second. */
  refillPerSecond: number;
  /** Tokens this request takes (usually 1). */
  cost: number;
  /** The caller's clock, epoch milliseconds. */
  now: number;
}

/** What taking tokens from a shared bucket came to. */
export type TokenTake = { type: 'taken'; remaining: number } | { type: 'limited'; retryAfterMs: number };

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
  /**
   * Claims still `claimed` (their call never ended: the process stopped) and last touched before `before`, with
   * their details, oldest first; `output` is undefined (it was never known).
   */
  listStaleClaims(before: string): Promise<PendingRecord[]>;
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
  /**
   * Atomically records a payment as reserved if the day's counted total (reserved, settled, pending) plus its
   * amount stays within `dayLimitMicros`; concurrent reservations can never exceed the limit together.
   */
  reserveSpend(spend: NewSpend, dayLimitMicros: number): Promise<SpendReservation>;
  /** Ends a reserved or pending payment as settled or failed, or keeps it pending with the payment to retry with. */
  finishSpend(id: string, update: SpendUpdate): Promise<void>;
  /** Marks a reserved or pending payment as never made (nothing was charged), giving its amount back to the budget. */
  cancelSpend(id: string, note: string): Promise<void>;
  /** The agent's payments, most recent first; optionally only some statuses. */
  listSpends(options?: { limit?: number; statuses?: readonly SpendStatus[] }): Promise<SpendRecord[]>;
  /** Millionths of a US dollar counted against the budget of `day` (reserved, settled and pending payments). */
  spentOn(day: string): Promise<number>;
  /** The most recent pending payment (outcome unknown) for a request, to be retried instead of paying again. */
  pendingSpend(requestHash: string): Promise<SpendRecord | undefined>;
  /**
   * Atomically takes `cost` tokens from the rate-limit bucket `key` if it holds that many; concurrent callers on any
   * number of instances can never take more than the bucket holds.
   */
  takeTokens(request: TokenRequest): Promise<TokenTake>;
  /** Takes from each of several buckets (each as `takeTokens` would), in one round trip to the store. */
  takeTokensFromEach(requests: readonly TokenRequest[]): Promise<TokenTake[]>;
  /** Forgets rate-limit buckets that are full again at `now` (epoch ms); returns how many. */
  purgeTokenBuckets(now: number): Promise<number>;
  /** Checks that the store answers. */
  /**
   * Resolves once every write made so far survives a power loss. The broker waits for it between a claim and its
   * settlement: a settled payment is then always found again (and its receipt rebuilt from the chain) after a crash.
   */
  durable(): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
