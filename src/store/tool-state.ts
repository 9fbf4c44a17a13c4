/** Tool state: what handlers keep between calls (testnet-fund's daily drips, the social-marketing orders), and nothing of payments. */

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
  replayKey: string;
  createdAt: string;
  updatedAt: string;
}

/** Result of claiming one more faucet drip. */
export type DripClaimResult = { type: 'granted'; count: number } | { type: 'limit_reached'; count: number };

/** The only store a handler receives (`ToolContext.store`): no handler sees a payment. */
export interface ToolState {
  /**
   * Atomically claims one drip for `subject` (e.g. network + address) on `day` (YYYY-MM-DD, UTC) if fewer than
   * `limit` were claimed; concurrent callers can never exceed the limit.
   */
  claimDrip(subject: string, day: string, limit: number): Promise<DripClaimResult>;
  /** Gives back a drip whose transfer did not happen. */
  releaseDrip(subject: string, day: string): Promise<void>;
  /** Stores a placed order (insert, or update of its status by order id). */
  saveOrder(order: OrderRecord): Promise<void>;
  /** One stored order, or undefined. */
  getOrder(orderId: string): Promise<OrderRecord | undefined>;
}
