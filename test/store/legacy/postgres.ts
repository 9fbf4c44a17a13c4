/**
 * The PostgreSQL schema as the store created it before the shared migration list: its six numbered migrations,
 * copied verbatim from src/store/dialects/postgres/migrations.ts of that release, and rows in the formats it wrote.
 */
import pg from 'pg';
import { LEGACY_ROWS as R } from './rows.js';

/** Every schema change of the release before the shared list, oldest first. */
export const POSTGRES_LEGACY_MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = [
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

const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));

/** Migrates the schema at `url` as that release did (versions 1–6 recorded in schema_migrations) and writes the rows of ./rows.ts. */
export async function createLegacyPostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
    for (const m of POSTGRES_LEGACY_MIGRATIONS) {
      await client.query(m.sql);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
    }
    await seed(client);
  } finally {
    await client.end();
  }
}

async function seed(client: pg.Client): Promise<void> {
  for (const c of R.claims) {
    await client.query(
      `INSERT INTO payment_claims (key, status, tool, network, payer, amount, transport, transaction_id, payload, requirements, request_hash, output, created_at, updated_at, protocol)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::json, $10::json, $11, $12::json, $13, $14, $15)`,
      [
        c.key,
        c.status,
        c.tool,
        c.network,
        c.payer,
        c.amount,
        c.transport,
        c.transaction ?? null,
        // A spent claim keeps only its request hash and output (payload and requirements are cleared).
        c.status === 'spent' ? null : json(c.details?.payload),
        c.status === 'spent' ? null : json(c.details?.requirements),
        c.details?.requestHash ?? null,
        json(c.output),
        c.createdAt,
        c.updatedAt,
        c.protocol,
      ],
    );
  }
  for (const r of R.receipts) {
    await client.query(
      `INSERT INTO receipts (key, tool, network, payer, amount, transaction_id, status, error_reason, transport, protocol, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        r.key,
        r.tool,
        r.network,
        r.payer,
        r.amount,
        r.transaction,
        r.status,
        r.errorReason ?? null,
        r.transport,
        r.protocol,
        r.createdAt,
      ],
    );
  }
  for (const i of R.idempotency) {
    await client.query(
      `INSERT INTO idempotency_records (id, tool, request_hash, payment_key, state, result, created_at, updated_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6::json, $7, $7, $8)`,
      [i.id, i.tool, i.requestHash, i.paymentKey, i.status, json(i.result), i.createdAt, i.expiresAt],
    );
  }
  for (const d of R.drips) {
    await client.query('INSERT INTO drips (subject, day, count) VALUES ($1, $2, $3)', [d.subject, d.day, d.count]);
  }
  for (const o of R.orders) {
    await client.query(
      `INSERT INTO orders (order_id, service_id, link, quantity, charge_usd, status, payer, payment_key, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
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
    );
  }
  for (const s of R.spends) {
    await client.query(
      `INSERT INTO agent_spends (id, day, tool, resource, request_hash, network, asset, amount, usd_micros, status, payment_id, protocol,
         payer, transaction_id, note, payload, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16::json, $17, $18)`,
      [
        s.id,
        s.day,
        s.tool,
        s.resource,
        s.requestHash,
        s.network,
        s.asset,
        s.amount,
        s.usdMicros,
        s.status,
        s.paymentId ?? null,
        s.protocol,
        s.payer ?? null,
        s.transaction ?? null,
        s.note ?? null,
        json(s.payload),
        s.createdAt,
        s.updatedAt,
      ],
    );
  }
  for (const b of R.buckets) await client.query('INSERT INTO rate_buckets (key, tat) VALUES ($1, $2)', [b.key, b.tat]);
}
