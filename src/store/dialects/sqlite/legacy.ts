/**
 * Files written before SQLite shared the numbered migrations: they have tables but no `user_version`. Adopting one
 * finishes its own ad-hoc upgrades (as the releases that wrote it did on every open), moves its tables aside, creates
 * the schema of version 6 and copies every row across, so the shared migrations continue from there.
 */
import type { SqliteDb } from './db.js';

/** The tables such a file had, as its last release created them when missing. */
const LEGACY_TABLES = [
  `CREATE TABLE IF NOT EXISTS payment_claims (key TEXT PRIMARY KEY,
     status TEXT NOT NULL CHECK (status IN ('claimed', 'pending', 'spent')), tool TEXT NOT NULL, network TEXT NOT NULL,
     payer TEXT NOT NULL, amount TEXT NOT NULL, transport TEXT NOT NULL, protocol TEXT NOT NULL DEFAULT 'x402',
     transaction_id TEXT, pending_json TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS receipts (id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, tool TEXT NOT NULL,
     network TEXT NOT NULL, payer TEXT NOT NULL, amount TEXT NOT NULL, transaction_id TEXT NOT NULL, status TEXT NOT NULL,
     error_reason TEXT, transport TEXT NOT NULL, protocol TEXT NOT NULL DEFAULT 'x402', created_at TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS idempotency (id TEXT PRIMARY KEY, tool TEXT NOT NULL, request_hash TEXT NOT NULL,
     payment_key TEXT NOT NULL, status TEXT NOT NULL CHECK (status IN ('in_flight', 'done')), result_json TEXT,
     created_at TEXT NOT NULL, expires_at TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS drips (subject TEXT NOT NULL, day TEXT NOT NULL, count INTEGER NOT NULL,
     PRIMARY KEY (subject, day))`,
  `CREATE TABLE IF NOT EXISTS orders (order_id TEXT PRIMARY KEY, service_id INTEGER NOT NULL, link TEXT NOT NULL,
     quantity INTEGER NOT NULL, charge_usd REAL NOT NULL, status TEXT NOT NULL, payer TEXT NOT NULL,
     payment_key TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS agent_spends (id TEXT PRIMARY KEY, day TEXT NOT NULL, tool TEXT NOT NULL,
     resource TEXT NOT NULL, request_hash TEXT NOT NULL, network TEXT NOT NULL, asset TEXT NOT NULL, amount TEXT NOT NULL,
     usd_micros INTEGER NOT NULL, status TEXT NOT NULL, payment_id TEXT, protocol TEXT NOT NULL DEFAULT 'x402',
     payer TEXT, transaction_id TEXT, note TEXT, payload_json TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS rate_buckets (key TEXT PRIMARY KEY, tat REAL NOT NULL)`,
];

/** The first release kept unknown settlements as status 'unknown' and had no pending details. */
const CLAIMS_V1 = [
  `ALTER TABLE payment_claims RENAME TO payment_claims_v1`,
  LEGACY_TABLES[0]!,
  `INSERT INTO payment_claims (key, status, tool, network, payer, amount, transport, transaction_id, created_at, updated_at)
     SELECT key, CASE status WHEN 'unknown' THEN 'pending' ELSE status END, tool, network, payer, amount, transport,
            transaction_id, created_at, updated_at FROM payment_claims_v1`,
  `DROP TABLE payment_claims_v1`,
];

/** Releases before MPP had no protocol columns: every payment they hold arrived through x402. */
const PROTOCOL_TABLES = ['payment_claims', 'receipts', 'agent_spends'];

const MOVED = ['payment_claims', 'receipts', 'idempotency', 'drips', 'orders', 'agent_spends', 'rate_buckets'];
const LEGACY_INDEXES = [
  'receipts_created',
  'idempotency_expires',
  'agent_spends_day',
  'agent_spends_created',
  'agent_spends_request',
];

/** Every row, from the moved-aside tables into the schema of version 6. */
const COPY = [
  `INSERT INTO payment_claims (key, status, tool, network, payer, amount, transport, protocol, transaction_id, payload,
     requirements, request_hash, output, created_at, updated_at)
   SELECT key, status, tool, network, payer, amount, transport, protocol, transaction_id, pending_json -> '$.payload',
     pending_json -> '$.requirements', pending_json ->> '$.requestHash', pending_json -> '$.output', created_at, updated_at
   FROM legacy_payment_claims`,
  `INSERT INTO receipts (id, key, tool, network, payer, amount, transaction_id, status, error_reason, transport, protocol,
     created_at)
   SELECT id, key, tool, network, payer, amount, transaction_id, status, error_reason, transport, protocol, created_at
   FROM legacy_receipts`,
  `INSERT INTO idempotency_records (id, tool, request_hash, payment_key, state, result, created_at, updated_at, expires_at)
   SELECT id, tool, request_hash, payment_key, status, result_json, created_at, created_at, expires_at FROM legacy_idempotency`,
  `INSERT INTO drips (subject, day, count) SELECT subject, day, count FROM legacy_drips`,
  `INSERT INTO orders (order_id, service_id, link, quantity, charge_usd, status, payer, payment_key, created_at, updated_at)
   SELECT order_id, service_id, link, quantity, charge_usd, status, payer, payment_key, created_at, updated_at
   FROM legacy_orders`,
  `INSERT INTO agent_spends (id, seq, day, tool, resource, request_hash, network, asset, amount, usd_micros, status,
     payment_id, protocol, payer, transaction_id, note, payload, created_at, updated_at)
   SELECT id, rowid, day, tool, resource, request_hash, network, asset, amount, usd_micros, status, payment_id, protocol,
     payer, transaction_id, note, payload_json, created_at, updated_at FROM legacy_agent_spends`,
  `INSERT INTO rate_buckets (key, tat) SELECT key, tat FROM legacy_rate_buckets`,
];

const columnsOf = (db: SqliteDb, table: string) =>
  db.execute(`PRAGMA table_info(${table})`).rows.map((c) => String(c.name));

/** A file with tables but no recorded version: written before the shared migrations. */
export function isLegacy(db: SqliteDb): boolean {
  const version = Number(db.execute('PRAGMA user_version').rows[0]?.user_version ?? 0);
  const found = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'payment_claims'").rows;
  return version === 0 && found.length > 0;
}

/** Finishes the file's own upgrades and moves its tables aside (inside the caller's transaction). */
export function setLegacyAside(db: SqliteDb): void {
  for (const sql of LEGACY_TABLES) db.exec(sql);
  if (!columnsOf(db, 'payment_claims').includes('pending_json')) for (const sql of CLAIMS_V1) db.exec(sql);
  for (const table of PROTOCOL_TABLES) {
    if (!columnsOf(db, table).includes('protocol'))
      db.exec(`ALTER TABLE ${table} ADD COLUMN protocol TEXT NOT NULL DEFAULT 'x402'`);
  }
  for (const index of LEGACY_INDEXES) db.exec(`DROP INDEX IF EXISTS ${index}`);
  for (const table of MOVED) db.exec(`ALTER TABLE ${table} RENAME TO legacy_${table}`);
}

/** Copies the moved-aside rows into the schema of version 6 and drops the old tables (inside the caller's transaction). */
export function copyLegacy(db: SqliteDb): void {
  for (const sql of COPY) db.exec(sql);
  for (const table of MOVED) db.exec(`DROP TABLE legacy_${table}`);
}
