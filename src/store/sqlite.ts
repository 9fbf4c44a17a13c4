import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createClient, type Client, type Row } from '@libsql/client';
import type { ClaimResult, PaymentClaim, ReceiptRecord, Store } from './store.js';

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS payment_claims (
     key TEXT PRIMARY KEY,
     status TEXT NOT NULL CHECK (status IN ('claimed', 'unknown', 'spent')),
     tool TEXT NOT NULL,
     network TEXT NOT NULL,
     payer TEXT NOT NULL,
     amount TEXT NOT NULL,
     transport TEXT NOT NULL,
     transaction_id TEXT,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS receipts (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     key TEXT NOT NULL,
     tool TEXT NOT NULL,
     network TEXT NOT NULL,
     payer TEXT NOT NULL,
     amount TEXT NOT NULL,
     transaction_id TEXT NOT NULL,
     status TEXT NOT NULL,
     error_reason TEXT,
     transport TEXT NOT NULL,
     created_at TEXT NOT NULL)`,
  `CREATE INDEX IF NOT EXISTS receipts_created ON receipts (created_at)`,
];

function rowToReceipt(row: Row): ReceiptRecord {
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
    createdAt: String(row.created_at),
  };
}

/** The embedded store: one SQLite file, safe for several processes on one machine. */
export class SqliteStore implements Store {
  private constructor(private readonly db: Client) {}

  /** Opens (and creates) the SQLite file at `path`. */
  static async open(path: string): Promise<SqliteStore> {
    mkdirSync(dirname(path), { recursive: true });
    const db = createClient({ url: pathToFileURL(path).href });
    await db.execute('PRAGMA journal_mode = WAL');
    await db.execute('PRAGMA busy_timeout = 5000');
    for (const sql of SCHEMA) await db.execute(sql);
    return new SqliteStore(db);
  }

  async claimPayment(claim: PaymentClaim): Promise<ClaimResult> {
    const now = new Date().toISOString();
    const inserted = await this.db.execute({
      sql: `INSERT INTO payment_claims (key, status, tool, network, payer, amount, transport, created_at, updated_at)
            VALUES (?, 'claimed', ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING RETURNING key`,
      args: [claim.key, claim.tool, claim.network, claim.payer, claim.amount, claim.transport, now, now],
    });
    if (inserted.rows.length === 1) return { type: 'claimed' };
    const existing = await this.db.execute({
      sql: 'SELECT status, transaction_id FROM payment_claims WHERE key = ?',
      args: [claim.key],
    });
    const row = existing.rows[0];
    if (!row) return this.claimPayment(claim); // released between the two statements
    const transaction = String(row.transaction_id ?? '');
    if (row.status === 'spent') return { type: 'spent', transaction };
    if (row.status === 'unknown') return { type: 'unknown', transaction };
    return { type: 'in_flight' };
  }

  async releasePayment(key: string): Promise<void> {
    await this.db.execute({
      sql: "DELETE FROM payment_claims WHERE key = ? AND status = 'claimed'",
      args: [key],
    });
  }

  async completePayment(receipt: ReceiptRecord): Promise<void> {
    await this.db.batch(
      [
        {
          sql: "UPDATE payment_claims SET status = 'spent', transaction_id = ?, updated_at = ? WHERE key = ?",
          args: [receipt.transaction, receipt.createdAt, receipt.key],
        },
        this.insertReceipt(receipt),
      ],
      'write',
    );
  }

  async markPaymentUnknown(key: string, transaction: string): Promise<void> {
    await this.db.execute({
      sql: "UPDATE payment_claims SET status = 'unknown', transaction_id = ?, updated_at = ? WHERE key = ? AND status = 'claimed'",
      args: [transaction, new Date().toISOString(), key],
    });
  }

  async recordReceipt(receipt: ReceiptRecord): Promise<void> {
    await this.db.execute(this.insertReceipt(receipt));
  }

  async listReceipts(options: { limit?: number } = {}): Promise<ReceiptRecord[]> {
    const result = await this.db.execute({
      sql: 'SELECT * FROM receipts ORDER BY id DESC LIMIT ?',
      args: [options.limit ?? 100],
    });
    return result.rows.map(rowToReceipt);
  }

  async ping(): Promise<void> {
    await this.db.execute('SELECT 1');
  }

  async close(): Promise<void> {
    this.db.close();
  }

  private insertReceipt(r: ReceiptRecord) {
    return {
      sql: `INSERT INTO receipts (key, tool, network, payer, amount, transaction_id, status, error_reason, transport, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      args: [r.key, r.tool, r.network, r.payer, r.amount, r.transaction, r.status, r.errorReason ?? null, r.transport, r.createdAt],
    };
  }
}
