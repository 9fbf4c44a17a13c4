import { claimFromRow, orderFromRow, receiptFromRow, type Row } from '../../rows.js';
import type { PendingRecord, ReceiptRecord } from '../../store.js';

export type { Row };

/** A TIMESTAMPTZ column (pg gives a Date) as the interface's ISO string. */
export const iso = (value: unknown): string => (value instanceof Date ? value : new Date(String(value))).toISOString();
/** JSON parameters are always sent as text: pg would turn a JS array into a PostgreSQL array literal. */
export const json = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));

/** A `receipts` row as a ReceiptRecord. */
export const rowToReceipt = (row: Row): ReceiptRecord => receiptFromRow(row, iso);

/** A pending `payment_claims` row as a PendingRecord. */
export function rowToPending(row: Row): PendingRecord {
  return {
    ...claimFromRow(row),
    transaction: String(row.transaction_id ?? ''),
    payload: row.payload,
    requirements: row.requirements,
    requestHash: String(row.request_hash ?? ''),
    output: row.output ?? undefined,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/** An `orders` row as an OrderRecord. */
export const rowToOrder = orderFromRow;
