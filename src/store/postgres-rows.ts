import type { OrderRecord, PendingRecord, ReceiptRecord } from './store.js';

/** A result row as pg returns it. */
export type Row = Record<string, unknown>;

/** A TIMESTAMPTZ column (pg gives a Date) as the interface's ISO string. */
export const iso = (value: unknown): string => (value instanceof Date ? value : new Date(String(value))).toISOString();
/** JSON parameters are always sent as text: pg would turn a JS array into a PostgreSQL array literal. */
export const json = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));

/** A `receipts` row as a ReceiptRecord. */
export function rowToReceipt(row: Row): ReceiptRecord {
  const reason = row.error_reason as string | null;
  return {
    key: String(row.key),
    tool: String(row.tool),
    network: String(row.network),
    payer: String(row.payer),
    amount: String(row.amount),
    transaction: String(row.transaction_id),
    status: row.status === 'settled' ? 'settled' : 'failed',
    ...(reason ? { errorReason: reason } : {}),
    transport: row.transport === 'mcp' ? 'mcp' : 'http',
    createdAt: iso(row.created_at),
  };
}

/** A pending `payment_claims` row as a PendingRecord. */
export function rowToPending(row: Row): PendingRecord {
  return {
    key: String(row.key),
    tool: String(row.tool),
    network: String(row.network),
    payer: String(row.payer),
    amount: String(row.amount),
    transport: row.transport === 'mcp' ? 'mcp' : 'http',
    transaction: String(row.transaction_id ?? ''),
    payload: row.payload,
    requirements: row.requirements,
    requestHash: String(row.request_hash ?? ''),
    output: row.output,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}


/** An `orders` row as an OrderRecord. */
export function rowToOrder(row: Row): OrderRecord {
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
