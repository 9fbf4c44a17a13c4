import type { Pool, PoolClient } from 'pg';

/** One numbered schema change; applied once, in order, and recorded in `schema_migrations`. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Every schema change of the PostgreSQL store, oldest first. Never edit an applied one: append a new one. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'replay guard, pending settlements, receipts, idempotency records',
    sql: `
      CREATE TABLE payment_claims (
        key TEXT PRIMARY KEY,
        status TEXT NOT NULL CHECK (status IN ('claimed', 'pending', 'spent')),
        tool TEXT NOT NULL,
        network TEXT NOT NULL,
        payer TEXT NOT NULL,
        amount TEXT NOT NULL,
        transport TEXT NOT NULL CHECK (transport IN ('http', 'mcp')),
        transaction_id TEXT,
        payload JSON,
        requirements JSON,
        request_hash TEXT,
        output JSON,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL);
      CREATE INDEX payment_claims_pending ON payment_claims (created_at) WHERE status = 'pending';
      CREATE TABLE receipts (
        id BIGSERIAL PRIMARY KEY,
        key TEXT NOT NULL,
        tool TEXT NOT NULL,
        network TEXT NOT NULL,
        payer TEXT NOT NULL,
        amount TEXT NOT NULL,
        transaction_id TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('settled', 'failed')),
        error_reason TEXT,
        transport TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL);
      CREATE INDEX receipts_created ON receipts (created_at DESC, id DESC);
      CREATE INDEX receipts_key ON receipts (key);
      CREATE TABLE idempotency_records (
        id TEXT PRIMARY KEY,
        tool TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        payment_key TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('in_flight', 'done')),
        result JSON,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL);
      CREATE INDEX idempotency_records_expires ON idempotency_records (expires_at);`,
  },
  {
    version: 2,
    name: 'daily faucet drips, placed orders',
    sql: `
      CREATE TABLE drips (
        subject TEXT NOT NULL,
        day TEXT NOT NULL,
        count INTEGER NOT NULL CHECK (count >= 0),
        PRIMARY KEY (subject, day));
      CREATE TABLE orders (
        order_id TEXT PRIMARY KEY,
        service_id INTEGER NOT NULL,
        link TEXT NOT NULL,
        quantity INTEGER NOT NULL,
        charge_usd DOUBLE PRECISION NOT NULL,
        status TEXT NOT NULL,
        payer TEXT NOT NULL,
        payment_key TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL);`,
  },
  {
    version: 3,
    name: 'agent spending (remote mode and tollbooth call budgets)',
    sql: `
      CREATE TABLE agent_spends (
        id TEXT PRIMARY KEY,
        seq BIGSERIAL,
        day TEXT NOT NULL,
        tool TEXT NOT NULL,
        resource TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        network TEXT NOT NULL,
        asset TEXT NOT NULL,
        amount TEXT NOT NULL,
        usd_micros BIGINT NOT NULL CHECK (usd_micros >= 0),
        status TEXT NOT NULL CHECK (status IN ('reserved', 'settled', 'pending', 'failed', 'cancelled')),
        payment_id TEXT,
        payer TEXT,
        transaction_id TEXT,
        note TEXT,
        payload JSON,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL);
      CREATE INDEX agent_spends_day ON agent_spends (day, status);
      CREATE INDEX agent_spends_created ON agent_spends (created_at DESC, seq DESC);
      CREATE INDEX agent_spends_request ON agent_spends (request_hash, status);`,
  },
  {
    version: 4,
    name: 'rate-limit buckets shared by instances',
    sql: `
      CREATE TABLE rate_buckets (
        key TEXT PRIMARY KEY,
        tat DOUBLE PRECISION NOT NULL);
      CREATE INDEX rate_buckets_tat ON rate_buckets (tat);`,
  },
  {
    version: 5,
    name: 'payment protocol (x402 or MPP) of claims and receipts',
    sql: `
      ALTER TABLE payment_claims ADD COLUMN protocol TEXT NOT NULL DEFAULT 'x402' CHECK (protocol IN ('x402', 'mpp'));
      ALTER TABLE receipts ADD COLUMN protocol TEXT NOT NULL DEFAULT 'x402' CHECK (protocol IN ('x402', 'mpp'));`,
  },
  {
    version: 6,
    name: "payment protocol (x402 or MPP) of the agent's spending",
    sql: `ALTER TABLE agent_spends ADD COLUMN protocol TEXT NOT NULL DEFAULT 'x402' CHECK (protocol IN ('x402', 'mpp'));`,
  },
];

/** What a start-up migration run found and did. */
export interface MigrationReport {
  applied: number[];
  /** Versions recorded in the database that this release does not know (a newer release migrated it). */
  unknown: number[];
}

/**
 * Creates `schema_migrations` and applies the missing migrations in one transaction, under a
 * transaction-scoped advisory lock keyed on the current schema, so instances starting together
 * take turns and each migration runs exactly once.
 */
export async function migrate(pool: Pool, migrations: readonly Migration[] = MIGRATIONS): Promise<MigrationReport> {
  const client: PoolClient = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    await client.query(
      "SELECT pg_advisory_xact_lock(hashtext('tollbooth.schema_migrations'), hashtext(coalesce(current_schema(), '')))",
    );
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
    const done = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const recorded = new Set(done.rows.map((r) => Number(r.version)));
    const applied: number[] = [];
    for (const m of migrations) {
      if (recorded.has(m.version)) continue;
      await client.query(m.sql);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.version);
    }
    await client.query('COMMIT');
    const known = new Set(migrations.map((m) => m.version));
    return { applied, unknown: [...recorded].filter((v) => !known.has(v)).sort((a, b) => a - b) };
  } catch (err) {
    await client.query('ROLLBACK').catch((e: Error) => (broken = e));
    throw err;
  } finally {
    client.release(broken);
  }
}
