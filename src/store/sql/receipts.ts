/** Receipts of the payment ledger, over the SQL port (one SQL text for both dialects). */
import type { ReceiptQuery, ReceiptRecord } from '../ledger.js';
import type { SqlPort, Statement } from './port.js';
import { receiptFromRow } from './rows.js';

const RECEIPT_COLUMNS =
  'replay_key, tool, network, payer, amount, transaction_id, status, error_reason, transport, protocol, created_at, kind, channel_id, cumulative_amount';

/** `INSERT INTO receipts … SELECT` of one receipt (no WHERE: {@link SqlPort.writeThen} may add one). */
export function insertReceiptSelect(r: ReceiptRecord): Statement {
  return {
    sql: `INSERT INTO receipts (${RECEIPT_COLUMNS}) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?`,
    args: [
      r.replayKey,
      r.tool,
      r.network,
      r.payer,
      r.amount,
      r.transaction,
      r.status,
      r.errorReason ?? null,
      r.transport,
      r.protocol ?? 'x402',
      r.createdAt,
      r.kind ?? 'transfer',
      r.channelId ?? null,
      r.cumulativeAmount ?? null,
    ],
  };
}

/** Stores one receipt. */
export async function recordReceipt(port: SqlPort, receipt: ReceiptRecord): Promise<void> {
  const { sql, args } = insertReceiptSelect(receipt);
  await port.write(sql, args);
}

/** Receipts, most recent first (the `since` bound reads the creation-time index from there on). */
export async function listReceipts(port: SqlPort, options: ReceiptQuery = {}): Promise<ReceiptRecord[]> {
  const where: string[] = [];
  const args: unknown[] = [];
  if (options.since !== undefined) {
    where.push('created_at >= ?');
    args.push(options.since);
  }
  if (options.kinds !== undefined) {
    where.push(`kind IN (${options.kinds.map(() => '?').join(', ') || 'NULL'})`);
    args.push(...options.kinds);
  }
  const filter = where.length ? `WHERE ${where.join(' AND ')} ` : '';
  const sql = `SELECT * FROM receipts ${filter}ORDER BY created_at DESC, id DESC LIMIT ?`;
  const rows = await port.read(sql, [...args, options.limit ?? 100]);
  return rows.map(receiptFromRow);
}
