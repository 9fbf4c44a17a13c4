import type { OrderRecord, PaymentClaim, ReceiptRecord } from './store.js';

/** A result row as either database driver returns it. */
export type Row = Record<string, unknown>;

/** Turns a time column into the interface's ISO string (SQLite keeps text, PostgreSQL gives a Date). */
export type TimeOf = (value: unknown) => string;

/** The claim columns every `payment_claims` row has. */
export function claimFromRow(row: Row): PaymentClaim {
  return {
    key: String(row.key),
    tool: String(row.tool),
    network: String(row.network),
    payer: String(row.payer),
    amount: String(row.amount),
    transport: row.transport === 'mcp' ? 'mcp' : 'http',
    protocol: row.protocol === 'mpp' ? 'mpp' : 'x402',
  };
}

/** A `receipts` row as a ReceiptRecord. */
export function receiptFromRow(row: Row, time: TimeOf): ReceiptRecord {
  const reason = row.error_reason as string | null;
  return {
    ...claimFromRow(row),
    transaction: String(row.transaction_id),
    status: row.status === 'settled' ? 'settled' : 'failed',
    ...(reason ? { errorReason: reason } : {}),
    createdAt: time(row.created_at),
  };
}

/** An `orders` row as an OrderRecord. */
export function orderFromRow(row: Row): OrderRecord {
  return {
    orderId: String(row.order_id),
    serviceId: Number(row.service_id),
    link: String(row.link),
    quantity: Number(row.quantity),
    chargeUsd: Number(row.charge_usd),
    status: String(row.status),
    payer: String(row.payer),
    paymentKey: String(row.payment_key),
    createdAt: String(row.created_at),
    updatedAt: String(row.updated_at),
  };
}
