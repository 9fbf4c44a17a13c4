/**
 * The SQLite schema as the store created it before the shared migration list (copied verbatim from
 * src/store/dialects/sqlite/{schema,spends,tokens}.ts of that release), and rows in the formats it wrote them.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'libsql';
import { LEGACY_ROWS as R } from './rows.js';

/** Every CREATE statement the store ran on open (all tables of the release before the shared list). */
export const SQLITE_LEGACY_DDL = [
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
  `CREATE TABLE IF NOT EXISTS agent_spends (
     id TEXT PRIMARY KEY,
     day TEXT NOT NULL,
     tool TEXT NOT NULL,
     resource TEXT NOT NULL,
     request_hash TEXT NOT NULL,
     network TEXT NOT NULL,
     asset TEXT NOT NULL,
     amount TEXT NOT NULL,
     usd_micros INTEGER NOT NULL CHECK (usd_micros >= 0),
     status TEXT NOT NULL CHECK (status IN ('reserved', 'settled', 'pending', 'failed', 'cancelled')),
     payment_id TEXT,
     protocol TEXT NOT NULL DEFAULT 'x402',
     payer TEXT,
     transaction_id TEXT,
     note TEXT,
     payload_json TEXT,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL)`,
  `CREATE INDEX IF NOT EXISTS agent_spends_day ON agent_spends (day, status)`,
  `CREATE INDEX IF NOT EXISTS agent_spends_created ON agent_spends (created_at)`,
  `CREATE INDEX IF NOT EXISTS agent_spends_request ON agent_spends (request_hash, status)`,
  `CREATE TABLE IF NOT EXISTS rate_buckets (
     key TEXT PRIMARY KEY,
     tat REAL NOT NULL)`,
];

const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));

/** Creates `file` with the legacy schema and one row per kind of state (see ./rows.ts), written as that release wrote them. */
export function createLegacySqlite(file: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  try {
    db.exec('PRAGMA journal_mode = WAL');
    for (const sql of SQLITE_LEGACY_DDL) db.exec(sql);
    const claim = db.prepare(
      `INSERT INTO payment_claims (key, status, tool, network, payer, amount, transport, protocol, transaction_id, pending_json, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const c of R.claims) {
      const pending = c.details ? { ...c.details, ...(c.output === undefined ? {} : { output: c.output }) } : undefined;
      claim.run(
        c.key,
        c.status,
        c.tool,
        c.network,
        c.payer,
        c.amount,
        c.transport,
        c.protocol,
        c.transaction ?? null,
        json(pending),
        c.createdAt,
        c.updatedAt,
      );
    }
    const receipt = db.prepare(
      `INSERT INTO receipts (key, tool, network, payer, amount, transaction_id, status, error_reason, transport, protocol, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const r of R.receipts) {
      receipt.run(
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
      );
    }
    const idem = db.prepare(
      `INSERT INTO idempotency (id, tool, request_hash, payment_key, status, result_json, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const i of R.idempotency) {
      idem.run(i.id, i.tool, i.requestHash, i.paymentKey, i.status, json(i.result), i.createdAt, i.expiresAt);
    }
    for (const d of R.drips)
      db.prepare('INSERT INTO drips (subject, day, count) VALUES (?, ?, ?)').run(d.subject, d.day, d.count);
    for (const o of R.orders) {
      db.prepare(
        `INSERT INTO orders (order_id, service_id, link, quantity, charge_usd, status, payer, payment_key, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
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
      );
    }
    const spend = db.prepare(
      `INSERT INTO agent_spends (id, day, tool, resource, request_hash, network, asset, amount, usd_micros, status, payment_id, protocol,
         payer, transaction_id, note, payload_json, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const s of R.spends) {
      spend.run(
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
      );
    }
    for (const b of R.buckets) db.prepare('INSERT INTO rate_buckets (key, tat) VALUES (?, ?)').run(b.key, b.tat);
  } finally {
    db.close();
  }
}
