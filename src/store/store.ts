/** The transport a paid call arrived on. */
export type Transport = 'http' | 'mcp';

/** What the replay guard records when a payment is claimed. */
export interface PaymentClaim {
  /** Replay key: network + payer + scheme nonce (EVM: EIP-3009 nonce). */
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

/** Result of trying to claim a payment in the replay guard. */
export type ClaimResult =
  | { type: 'claimed' }
  | { type: 'in_flight' }
  | { type: 'unknown'; transaction: string }
  | { type: 'spent'; transaction: string };

/** Persistence for payment claims and receipts; SQLite by default. */
export interface Store {
  /** Atomically claims a payment; only one caller ever gets `claimed` for a key. */
  claimPayment(claim: PaymentClaim): Promise<ClaimResult>;
  /** Releases a claim that did not settle, so the same authorization may be used again. */
  releasePayment(key: string): Promise<void>;
  /** Marks a claim as spent and stores its receipt, in one transaction. */
  completePayment(receipt: ReceiptRecord): Promise<void>;
  /** Marks a claim whose settlement outcome is unknown (timeout): it stays unusable until reconciled. */
  markPaymentUnknown(key: string, transaction: string): Promise<void>;
  /** Stores a receipt of a failed settlement (the claim is released separately). */
  recordReceipt(receipt: ReceiptRecord): Promise<void>;
  /** Most recent receipts first. */
  listReceipts(options?: { limit?: number }): Promise<ReceiptRecord[]>;
  /** Checks that the store answers. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
