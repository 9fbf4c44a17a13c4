import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { SqliteDb, type Row, type Statement } from './port.js';
import { claimFromRow, orderFromRow, receiptFromRow } from '../../rows.js';
import { MIGRATE_CLAIMS_V1, PROTOCOL_COLUMNS, SCHEMA } from './schema.js';
import { SPENDS_PROTOCOL_COLUMN, SPENDS_SCHEMA, SqliteSpends } from './spends.js';
import { SqliteTokenBuckets, TOKENS_SCHEMA } from './tokens.js';
import type {
  ClaimResult,
  DripClaim,
  NewSpend,
  OrderRecord,
  IdempotencyBegin,
  IdempotencyClaim,
  PaymentClaim,
  PendingDetails,
  PendingRecord,
  ReceiptRecord,
  SpendRecord,
  SpendReservation,
  SpendStatus,
  SpendUpdate,
  Store,
  StoredResult,
  TokenRequest,
  TokenTake,
} from '../../store.js';

const rowToReceipt = (row: Row): ReceiptRecord => receiptFromRow(row, String);

function rowToPending(row: Row): PendingRecord {
  const details = JSON.parse(String(row.pending_json ?? '{}')) as Omit<PendingDetails, 'transaction'>;
  return {
    ...claimFromRow(row),
    transaction: String(row.transaction_id ?? ''),
    payload: details.payload,
    requirements: details.requirements,
    requestHash: details.requestHash ?? '',
    output: details.output,
    createdAt: String(row.created_at),
    updatedAt: String(row.updated_at),
  };
}

/** The embedded store: one SQLite file, safe for several processes on one machine. */
export class SqliteStore implements Store {
  private readonly spends: SqliteSpends;
  private readonly tokens: SqliteTokenBuckets;

  private constructor(private readonly db: SqliteDb) {
    this.spends = new SqliteSpends(db);
    this.tokens = new SqliteTokenBuckets(db);
  }

  /** Opens (and creates or migrates) the SQLite file at `path`. */
  static async open(path: string): Promise<SqliteStore> {
    mkdirSync(dirname(path), { recursive: true });
    const db = SqliteDb.open(path);
    for (const sql of [...SCHEMA, ...SPENDS_SCHEMA, ...TOKENS_SCHEMA]) await db.execute(sql);
    const columns = await db.execute('PRAGMA table_info(payment_claims)');
    if (!columns.rows.some((c) => c.name === 'pending_json')) db.batch(MIGRATE_CLAIMS_V1.map((sql) => ({ sql })));
    for (const { table, sql } of [...PROTOCOL_COLUMNS, SPENDS_PROTOCOL_COLUMN]) {
      const existing = await db.execute(`PRAGMA table_info(${table})`);
      if (!existing.rows.some((c) => c.name === 'protocol')) await db.execute(sql);
    }
    return new SqliteStore(db);
  }

  async claimPayment(claim: PaymentClaim): Promise<ClaimResult> {
    const now = new Date().toISOString();
    const details = claim.details ? JSON.stringify(claim.details) : null;
    // One write: insert the claim, or read the row that holds the key, in the same transaction (no race between them).
    const result = await this.db.write((): ClaimResult => {
      const inserted = this.db.execute({
        sql: `INSERT INTO payment_claims (key, status, tool, network, payer, amount, transport, protocol, pending_json, created_at, updated_at)
              VALUES (?, 'claimed', ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`,
        args: [
          claim.key,
          claim.tool,
          claim.network,
          claim.payer,
          claim.amount,
          claim.transport,
          claim.protocol ?? 'x402',
          details,
          now,
          now,
        ],
      });
      if (inserted.rowsAffected === 1) return { type: 'claimed' };
      const row = this.db.execute({ sql: 'SELECT * FROM payment_claims WHERE key = ?', args: [claim.key] }).rows[0]!;
      if (row.status === 'spent') {
        const transaction = String(row.transaction_id ?? '');
        const { requestHash, output } = rowToPending(row);
        // Only a payment that was pending kept an output: the one a retry of the same request may still collect.
        return output === undefined
          ? { type: 'spent', transaction }
          : { type: 'spent', transaction, undelivered: { requestHash, output } };
      }
      if (row.status === 'pending') return { type: 'pending', pending: rowToPending(row) };
      return { type: 'in_flight' };
    });
    // The claim must be on disk before its settlement: start the fsync now, while the payment is verified and the tool runs.
    if (result.type === 'claimed') this.db.sync().catch(() => undefined);
    return result;
  }

  async releasePayment(key: string): Promise<void> {
    await this.db.write(() =>
      this.db.execute({ sql: "DELETE FROM payment_claims WHERE key = ? AND status = 'claimed'", args: [key] }),
    );
  }

  async completePayment(receipt: ReceiptRecord): Promise<void> {
    // The receipt is written only by whoever moves the claim on, so instances reconciling the same payment record it once.
    await this.db.write(() => {
      const moved = this.db.execute({
        sql: "UPDATE payment_claims SET status = 'spent', transaction_id = ?, updated_at = ? WHERE key = ? AND status IN ('claimed', 'pending')",
        args: [receipt.transaction, receipt.createdAt, receipt.key],
      });
      if (moved.rowsAffected === 1) this.db.execute(this.insertReceipt(receipt));
    });
  }

  async markPaymentPending(key: string, details: PendingDetails): Promise<void> {
    const { transaction, ...rest } = details;
    const args = [transaction, JSON.stringify(rest), new Date().toISOString(), key];
    await this.db.write(() =>
      this.db.execute({
        sql: "UPDATE payment_claims SET status = 'pending', transaction_id = ?, pending_json = ?, updated_at = ? WHERE key = ? AND status IN ('claimed', 'pending')",
        args,
      }),
    );
  }

  async listPending(): Promise<PendingRecord[]> {
    const result = await this.db.execute("SELECT * FROM payment_claims WHERE status = 'pending' ORDER BY created_at");
    return result.rows.map(rowToPending);
  }

  async listStaleClaims(before: string): Promise<PendingRecord[]> {
    const result = await this.db.execute({
      sql: "SELECT * FROM payment_claims WHERE status = 'claimed' AND updated_at < ? ORDER BY created_at",
      args: [before],
    });
    return result.rows.map(rowToPending);
  }

  async failPending(receipt: ReceiptRecord): Promise<void> {
    await this.db.batch([
      this.insertReceipt(receipt, "status = 'pending'"),
      { sql: "DELETE FROM payment_claims WHERE key = ? AND status = 'pending'", args: [receipt.key] },
    ]);
  }

  async recordReceipt(receipt: ReceiptRecord): Promise<void> {
    await this.db.write(() => this.db.execute(this.insertReceipt(receipt)));
  }

  async listReceipts(options: { limit?: number } = {}): Promise<ReceiptRecord[]> {
    const result = await this.db.execute({
      sql: 'SELECT * FROM receipts ORDER BY id DESC LIMIT ?',
      args: [options.limit ?? 100],
    });
    return result.rows.map(rowToReceipt);
  }

  async beginIdempotent(claim: IdempotencyClaim): Promise<IdempotencyBegin> {
    const now = new Date().toISOString();
    // One write: forget an expired record, insert the id, or read the record that holds it, in one transaction.
    return this.db.write((): IdempotencyBegin => {
      this.db.execute({ sql: 'DELETE FROM idempotency WHERE id = ? AND expires_at <= ?', args: [claim.id, now] });
      const inserted = this.db.execute({
        sql: `INSERT INTO idempotency (id, tool, request_hash, payment_key, status, created_at, expires_at)
              VALUES (?, ?, ?, ?, 'in_flight', ?, ?) ON CONFLICT (id) DO NOTHING`,
        args: [claim.id, claim.tool, claim.requestHash, claim.paymentKey, now, claim.expiresAt],
      });
      if (inserted.rowsAffected === 1) return { type: 'new' };
      const row = this.db.execute({ sql: 'SELECT * FROM idempotency WHERE id = ?', args: [claim.id] }).rows[0]!;
      if (row.request_hash !== claim.requestHash || row.tool !== claim.tool)
        return { type: 'conflict', reason: 'different_request' };
      if (row.payment_key !== claim.paymentKey) return { type: 'conflict', reason: 'different_payment' };
      if (row.status === 'done') return { type: 'done', result: JSON.parse(String(row.result_json)) as StoredResult };
      return { type: 'in_flight' };
    });
  }

  async finishIdempotent(id: string, result: StoredResult): Promise<void> {
    const args = [JSON.stringify(result), id];
    await this.db.write(() =>
      this.db.execute({ sql: "UPDATE idempotency SET status = 'done', result_json = ? WHERE id = ?", args }),
    );
  }

  async abandonIdempotent(id: string): Promise<void> {
    await this.db.write(() =>
      this.db.execute({ sql: "DELETE FROM idempotency WHERE id = ? AND status = 'in_flight'", args: [id] }),
    );
  }

  async purgeExpired(now: string): Promise<number> {
    const result = await this.db.execute({ sql: 'DELETE FROM idempotency WHERE expires_at <= ?', args: [now] });
    return result.rowsAffected;
  }

  async claimDrip(subject: string, day: string, limit: number): Promise<DripClaim> {
    // One statement: insert the first drip, or count one more only while under the limit.
    const taken = await this.db.execute({
      sql: `INSERT INTO drips (subject, day, count) VALUES (?, ?, 1)
            ON CONFLICT (subject, day) DO UPDATE SET count = count + 1 WHERE count < ?
            RETURNING count`,
      args: [subject, day, limit],
    });
    const row = taken.rows[0];
    if (row && limit > 0) return { type: 'granted', count: Number(row.count) };
    if (row) await this.releaseDrip(subject, day);
    const current = await this.db.execute({
      sql: 'SELECT count FROM drips WHERE subject = ? AND day = ?',
      args: [subject, day],
    });
    return { type: 'limit_reached', count: Number(current.rows[0]?.count ?? 0) };
  }

  async releaseDrip(subject: string, day: string): Promise<void> {
    await this.db.execute({
      sql: 'UPDATE drips SET count = count - 1 WHERE subject = ? AND day = ? AND count > 0',
      args: [subject, day],
    });
  }

  async saveOrder(o: OrderRecord): Promise<void> {
    await this.db.execute({
      sql: `INSERT INTO orders (order_id, service_id, link, quantity, charge_usd, status, payer, payment_key, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (order_id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at`,
      args: [
        o.orderId,
        o.serviceId,
        o.link,
        o.quantity,
        o.chargeUsd,
        o.status,
        o.payer,
        o.paymentKey,
        o.createdAt,
        o.updatedAt,
      ],
    });
  }

  async getOrder(orderId: string): Promise<OrderRecord | undefined> {
    const row = (await this.db.execute({ sql: 'SELECT * FROM orders WHERE order_id = ?', args: [orderId] })).rows[0];
    return row ? orderFromRow(row) : undefined;
  }

  // Agent spending (remote mode, `tollbooth call`): the statements live in the *-spends module.
  reserveSpend(spend: NewSpend, dayLimitMicros: number): Promise<SpendReservation> {
    return this.spends.reserve(spend, dayLimitMicros);
  }
  finishSpend(id: string, update: SpendUpdate): Promise<void> {
    return this.spends.finish(id, update);
  }
  cancelSpend(id: string, note: string): Promise<void> {
    return this.spends.cancel(id, note);
  }
  listSpends(options?: { limit?: number; statuses?: readonly SpendStatus[] }): Promise<SpendRecord[]> {
    return this.spends.list(options);
  }
  spentOn(day: string): Promise<number> {
    return this.spends.spentOn(day);
  }
  pendingSpend(requestHash: string): Promise<SpendRecord | undefined> {
    return this.spends.pending(requestHash);
  }

  async takeTokensFromEach(requests: readonly TokenRequest[]): Promise<TokenTake[]> {
    const taken: TokenTake[] = [];
    for (const request of requests) taken.push(await this.tokens.take(request));
    return taken;
  }

  takeTokens(request: TokenRequest): Promise<TokenTake> {
    return this.tokens.take(request);
  }

  purgeTokenBuckets(now: number): Promise<number> {
    return this.tokens.purge(now);
  }

  durable(): Promise<void> {
    return this.db.sync();
  }

  async ping(): Promise<void> {
    await this.db.execute('SELECT 1');
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  /** Inserts a receipt; with `claimState`, only while the payment's claim is in that state. */
  private insertReceipt(r: ReceiptRecord, claimState?: string): Statement {
    const values = [
      r.key,
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
    ];
    const columns =
      'INSERT INTO receipts (key, tool, network, payer, amount, transaction_id, status, error_reason, transport, protocol, created_at)';
    if (!claimState) return { sql: `${columns} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args: values };
    return {
      sql: `${columns} SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM payment_claims WHERE key = ? AND ${claimState})`,
      args: [...values, r.key],
    };
  }
}
