/** Tables of the embedded SQLite store (created if missing on every open). */
export const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS payment_claims (
     key TEXT PRIMARY KEY,
     status TEXT NOT NULL CHECK (status IN ('claimed', 'pending', 'spent')),
     tool TEXT NOT NULL,
     network TEXT NOT NULL,
     payer TEXT NOT NULL,
     amount TEXT NOT NULL,
     transport TEXT NOT NULL,
     protocol TEXT NOT NULL DEFAULT 'x402',
     transaction_id TEXT,
     pending_json TEXT,
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
     protocol TEXT NOT NULL DEFAULT 'x402',
     created_at TEXT NOT NULL)`,
  `CREATE INDEX IF NOT EXISTS receipts_created ON receipts (created_at)`,
  `CREATE TABLE IF NOT EXISTS idempotency (
     id TEXT PRIMARY KEY,
     tool TEXT NOT NULL,
     request_hash TEXT NOT NULL,
     payment_key TEXT NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('in_flight', 'done')),
     result_json TEXT,
     created_at TEXT NOT NULL,
     expires_at TEXT NOT NULL)`,
  `CREATE INDEX IF NOT EXISTS idempotency_expires ON idempotency (expires_at)`,
  `CREATE TABLE IF NOT EXISTS drips (
     subject TEXT NOT NULL,
     day TEXT NOT NULL,
     count INTEGER NOT NULL,
     PRIMARY KEY (subject, day))`,
  `CREATE TABLE IF NOT EXISTS orders (
     order_id TEXT PRIMARY KEY,
     service_id INTEGER NOT NULL,
     link TEXT NOT NULL,
     quantity INTEGER NOT NULL,
     charge_usd REAL NOT NULL,
     status TEXT NOT NULL,
     payer TEXT NOT NULL,
     payment_key TEXT NOT NULL,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL)`,
];

/** Databases written by the first release kept unknown settlements as status 'unknown' and had no pending details. */
export const MIGRATE_CLAIMS_V1 = [
  `ALTER TABLE payment_claims RENAME TO payment_claims_v1`,
  SCHEMA[0]!,
  `INSERT INTO payment_claims (key, status, tool, network, payer, amount, transport, transaction_id, created_at, updated_at)
     SELECT key, CASE status WHEN 'unknown' THEN 'pending' ELSE status END, tool, network, payer, amount, transport,
            transaction_id, created_at, updated_at FROM payment_claims_v1`,
  `DROP TABLE payment_claims_v1`,
];

/** Databases written before MPP had no protocol columns: every payment they hold arrived through x402. */
export const PROTOCOL_COLUMNS = [
  { table: 'payment_claims', sql: `ALTER TABLE payment_claims ADD COLUMN protocol TEXT NOT NULL DEFAULT 'x402'` },
  { table: 'receipts', sql: `ALTER TABLE receipts ADD COLUMN protocol TEXT NOT NULL DEFAULT 'x402'` },
] as const;
