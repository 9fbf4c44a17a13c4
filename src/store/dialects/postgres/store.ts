import pg from 'pg';
import type { Logger } from '../../../log.js';
import { migrate } from './migrations.js';
import { json, rowToPending, rowToReceipt, type Row } from './rows.js';
import { PostgresSpends } from './spends.js';
import { PostgresToolState } from './tool-state.js';
import { PostgresTokenBuckets } from './tokens.js';
import { describeDatabaseUrl, errorText, isConnectionError, redactor } from './url.js';
import type {
  ClaimResult,
  DripClaim,
  IdempotencyBegin,
  IdempotencyClaim,
  NewSpend,
  OrderRecord,
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

const RECEIPT_COLUMNS =
  'key, tool, network, payer, amount, transaction_id, status, error_reason, transport, protocol, created_at';
const receiptArgs = (r: ReceiptRecord) => [
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
const INSERT_RECEIPT = `INSERT INTO receipts (${RECEIPT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`;

/** Options for opening the PostgreSQL store. */
export interface PostgresStoreOptions {
  log?: Logger;
  /** Most connections this instance keeps open (default 10). */
  maxConnections?: number;
  /** How long to wait for a connection before failing a call (default 10 s). */
  connectTimeoutMs?: number;
  /** Told of every round trip to the server (tests and benches count them per paid call). */
  onRoundTrip?: () => void;
}

/** The shared store for several instances: PostgreSQL, every state change atomic in the database. */
export class PostgresStore implements Store {
  private readonly spends: PostgresSpends;
  private readonly toolState: PostgresToolState;
  private readonly tokens: PostgresTokenBuckets;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly target: string,
    private readonly redact: (message: string) => string,
    private readonly onRoundTrip: () => void = () => undefined,
  ) {
    this.spends = new PostgresSpends(
      (sql, args) => this.query(sql, args),
      (fn) => this.transaction(fn),
    );
    this.toolState = new PostgresToolState((sql, args) => this.query(sql, args));
    this.tokens = new PostgresTokenBuckets((sql, args) => this.query(sql, args));
  }

  /** Connects to `url` (a DATABASE_URL) and applies missing migrations; throws with a clear, password-free message. */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const target = describeDatabaseUrl(url);
    const redact = redactor(url);
    const pool = new pg.Pool({
      connectionString: url,
      max: options.maxConnections ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
      keepAlive: true,
      application_name: 'tollbooth',
    });
    // An idle connection that drops (server restart, failover) must not crash the process.
    pool.on('error', (err) =>
      options.log?.warn('an idle PostgreSQL connection failed', { database: target, error: redact(errorText(err)) }),
    );
    try {
      const report = await migrate(pool);
      if (report.applied.length > 0)
        options.log?.info('PostgreSQL store migrated', { database: target, applied: report.applied });
      if (report.unknown.length > 0) {
        options.log?.warn(
          'the PostgreSQL schema has migrations this release does not know (a newer release ran here)',
          { database: target, versions: report.unknown },
        );
      }
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw new Error(
        `Could not open the PostgreSQL store at ${target}: ${redact(errorText(err))}. Check DATABASE_URL and that the server is reachable.`,
      );
    }
    return new PostgresStore(pool, target, redact, options.onRoundTrip);
  }

  async claimPayment(claim: PaymentClaim): Promise<ClaimResult> {
    const now = new Date().toISOString();
    for (;;) {
      const inserted = await this.query(
        `INSERT INTO payment_claims (key, status, tool, network, payer, amount, transport, payload, requirements, request_hash, created_at, updated_at, protocol)
         VALUES ($1, 'claimed', $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11) ON CONFLICT (key) DO NOTHING RETURNING key`,
        [
          claim.key,
          claim.tool,
          claim.network,
          claim.payer,
          claim.amount,
          claim.transport,
          json(claim.details?.payload),
          json(claim.details?.requirements),
          claim.details?.requestHash ?? null,
          now,
          claim.protocol ?? 'x402',
        ],
      );
      if (inserted.length === 1) return { type: 'claimed' };
      const [row] = await this.query('SELECT * FROM payment_claims WHERE key = $1', [claim.key]);
      if (!row) continue; // released between the two statements: try to claim again
      switch (row.status) {
        case 'spent': {
          const transaction = String(row.transaction_id ?? '');
          // Completed after being pending: the output that was never delivered goes to a retry of the same request.
          if (row.output === null || row.output === undefined) return { type: 'spent', transaction };
          return {
            type: 'spent',
            transaction,
            undelivered: { requestHash: String(row.request_hash), output: row.output },
          };
        }
        case 'pending':
          return { type: 'pending', pending: rowToPending(row) };
        default:
          return { type: 'in_flight' };
      }
    }
  }

  async releasePayment(key: string): Promise<void> {
    await this.query("DELETE FROM payment_claims WHERE key = $1 AND status = 'claimed'", [key]);
  }

  async completePayment(receipt: ReceiptRecord): Promise<void> {
    // One statement, one round trip, atomic: only whoever moves the claim on writes the receipt, so a payment completed
    // twice (two reconcilers) keeps one. A pending payment keeps its request hash and output (undelivered); payload and
    // requirements are done with.
    await this.query(
      `WITH moved AS (
         INSERT INTO payment_claims (key, status, tool, network, payer, amount, transport, protocol, transaction_id, created_at, updated_at)
         VALUES ($1, 'spent', $2, $3, $4, $5, $9, $10, $6, $11, $11)
         ON CONFLICT (key) DO UPDATE SET status = 'spent', transaction_id = EXCLUDED.transaction_id, updated_at = EXCLUDED.updated_at,
           payload = NULL, requirements = NULL
         WHERE payment_claims.status <> 'spent'
         RETURNING key)
       INSERT INTO receipts (${RECEIPT_COLUMNS}) SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 WHERE EXISTS (SELECT 1 FROM moved)`,
      receiptArgs(receipt),
    );
  }

  async markPaymentPending(key: string, details: PendingDetails): Promise<void> {
    await this.query(
      `UPDATE payment_claims SET status = 'pending', transaction_id = $2, payload = $3::json, requirements = $4::json,
         request_hash = $5, output = $6::json, updated_at = $7
       WHERE key = $1 AND status IN ('claimed', 'pending')`,
      [
        key,
        details.transaction,
        json(details.payload),
        json(details.requirements),
        details.requestHash,
        json(details.output),
        new Date().toISOString(),
      ],
    );
  }

  async listStaleClaims(before: string): Promise<PendingRecord[]> {
    const rows = await this.query(
      "SELECT * FROM payment_claims WHERE status = 'claimed' AND updated_at < $1 ORDER BY created_at, key",
      [before],
    );
    return rows.map(rowToPending);
  }

  async listPending(): Promise<PendingRecord[]> {
    const rows = await this.query(
      "SELECT * FROM payment_claims WHERE status = 'pending' ORDER BY created_at, updated_at, key",
    );
    return rows.map(rowToPending);
  }

  async failPending(receipt: ReceiptRecord): Promise<void> {
    // Only a payment still pending is ended here; one another instance completed meanwhile stays spent.
    await this.query(
      `WITH released AS (DELETE FROM payment_claims WHERE key = $1 AND status = 'pending' RETURNING key)
       INSERT INTO receipts (${RECEIPT_COLUMNS}) SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 WHERE EXISTS (SELECT 1 FROM released)`,
      receiptArgs(receipt),
    );
  }

  async recordReceipt(receipt: ReceiptRecord): Promise<void> {
    await this.query(INSERT_RECEIPT, receiptArgs(receipt));
  }

  async listReceipts(options: { limit?: number } = {}): Promise<ReceiptRecord[]> {
    const rows = await this.query(
      `SELECT ${RECEIPT_COLUMNS} FROM receipts ORDER BY created_at DESC, id DESC LIMIT $1`,
      [options.limit ?? 100],
    );
    return rows.map(rowToReceipt);
  }

  async beginIdempotent(claim: IdempotencyClaim): Promise<IdempotencyBegin> {
    for (;;) {
      const now = new Date().toISOString();
      // Inserts a new record, or takes over an expired one; the row lock makes concurrent begins take turns.
      const taken = await this.query(
        `INSERT INTO idempotency_records (id, tool, request_hash, payment_key, state, result, created_at, updated_at, expires_at)
         VALUES ($1, $2, $3, $4, 'in_flight', NULL, $5, $5, $6)
         ON CONFLICT (id) DO UPDATE SET tool = EXCLUDED.tool, request_hash = EXCLUDED.request_hash, payment_key = EXCLUDED.payment_key,
           state = 'in_flight', result = NULL, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at, expires_at = EXCLUDED.expires_at
         WHERE idempotency_records.expires_at <= $5
         RETURNING id`,
        [claim.id, claim.tool, claim.requestHash, claim.paymentKey, now, claim.expiresAt],
      );
      if (taken.length === 1) return { type: 'new' };
      const [row] = await this.query('SELECT * FROM idempotency_records WHERE id = $1 AND expires_at > $2', [
        claim.id,
        now,
      ]);
      if (!row) continue; // abandoned or expired between the two statements
      if (row.request_hash !== claim.requestHash || row.tool !== claim.tool)
        return { type: 'conflict', reason: 'different_request' };
      if (row.payment_key !== claim.paymentKey) return { type: 'conflict', reason: 'different_payment' };
      if (row.state === 'done') return { type: 'done', result: row.result as StoredResult };
      return { type: 'in_flight' };
    }
  }

  async finishIdempotent(id: string, result: StoredResult): Promise<void> {
    await this.query(
      "UPDATE idempotency_records SET state = 'done', result = $2::json, updated_at = $3 WHERE id = $1 AND state = 'in_flight'",
      [id, json(result), new Date().toISOString()],
    );
  }

  async abandonIdempotent(id: string): Promise<void> {
    await this.query("DELETE FROM idempotency_records WHERE id = $1 AND state = 'in_flight'", [id]);
  }

  async purgeExpired(now: string): Promise<number> {
    const rows = await this.query('DELETE FROM idempotency_records WHERE expires_at <= $1 RETURNING id', [now]);
    return rows.length;
  }

  // Tool state (testnet-fund drips, smm orders): the statements live in the *-tool-state module.
  claimDrip(subject: string, day: string, limit: number): Promise<DripClaim> {
    return this.toolState.claimDrip(subject, day, limit);
  }
  releaseDrip(subject: string, day: string): Promise<void> {
    return this.toolState.releaseDrip(subject, day);
  }
  saveOrder(order: OrderRecord): Promise<void> {
    return this.toolState.saveOrder(order);
  }
  getOrder(orderId: string): Promise<OrderRecord | undefined> {
    return this.toolState.getOrder(orderId);
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

  takeTokensFromEach(requests: readonly TokenRequest[]): Promise<TokenTake[]> {
    return this.tokens.takeEach(requests);
  }

  takeTokens(request: TokenRequest): Promise<TokenTake> {
    return this.tokens.take(request);
  }

  purgeTokenBuckets(now: number): Promise<number> {
    return this.tokens.purge(now);
  }

  /** Every commit is durable when it returns (PostgreSQL waits for its WAL flush). */
  async durable(): Promise<void> {}

  async ping(): Promise<void> {
    await this.query('SELECT 1');
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  /** Runs one statement; a lost or refused connection becomes an error naming the database (never its password). */
  private async query(sql: string, args: unknown[] = []): Promise<Row[]> {
    this.onRoundTrip();
    try {
      return (await this.pool.query(sql, args)).rows as Row[];
    } catch (err) {
      throw this.wrap(err);
    }
  }

  /** Runs `fn` in one transaction on one connection: all of its statements take effect, or none. */
  private async transaction(
    fn: (q: (sql: string, args?: unknown[]) => Promise<Row[]>) => Promise<void>,
  ): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw this.wrap(err);
    }
    let broken: Error | undefined;
    try {
      this.onRoundTrip();
      await client.query('BEGIN');
      await fn(async (sql, args = []) => {
        this.onRoundTrip();
        return (await client.query(sql, args)).rows as Row[];
      });
      this.onRoundTrip();
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw this.wrap(err);
    } finally {
      client.release(broken);
    }
  }

  private wrap(err: unknown): Error {
    const message = this.redact(errorText(err));
    if (isConnectionError(err))
      return new Error(`PostgreSQL store unavailable (${this.target}): ${message}`, { cause: err });
    if (err instanceof Error && message === err.message) return err;
    return new Error(message);
  }
}
