/**
 * The one schema of both databases, as its one numbered list of migrations, oldest first. Never edit an applied one:
 * append a new one. The DDL is written once; `{json}`, `{time}`, `{double}`, `{bigint}`, `{serial}` and `{sequence}`
 * stand for the column types each dialect spells its own way (see `render` in ./migrate.ts). Constraints are named
 * as PostgreSQL names them by default, so databases migrated before the names were spelled out match new ones, and
 * primary keys say NOT NULL (implied in PostgreSQL, not in SQLite).
 */
import type { Migration } from './migrate.js';

/** Every schema change of the store, oldest first. Versions 1–6 are the PostgreSQL store's history before SQLite shared it. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'replay guard, pending settlements, receipts, idempotency records',
    sql: [
      `CREATE TABLE payment_claims (
        key TEXT NOT NULL PRIMARY KEY,
        status TEXT NOT NULL CONSTRAINT payment_claims_status_check CHECK (status IN ('claimed', 'pending', 'spent')),
        tool TEXT NOT NULL,
        network TEXT NOT NULL,
        payer TEXT NOT NULL,
        amount TEXT NOT NULL,
        transport TEXT NOT NULL CONSTRAINT payment_claims_transport_check CHECK (transport IN ('http', 'mcp')),
        transaction_id TEXT,
        payload {json},
        requirements {json},
        request_hash TEXT,
        output {json},
        created_at {time} NOT NULL,
        updated_at {time} NOT NULL)`,
      `CREATE INDEX payment_claims_pending ON payment_claims (created_at) WHERE status = 'pending'`,
      `CREATE TABLE receipts (
        id {serial},
        key TEXT NOT NULL,
        tool TEXT NOT NULL,
        network TEXT NOT NULL,
        payer TEXT NOT NULL,
        amount TEXT NOT NULL,
        transaction_id TEXT NOT NULL,
        status TEXT NOT NULL CONSTRAINT receipts_status_check CHECK (status IN ('settled', 'failed')),
        error_reason TEXT,
        transport TEXT NOT NULL,
        created_at {time} NOT NULL)`,
      `CREATE INDEX receipts_created ON receipts (created_at DESC, id DESC)`,
      `CREATE INDEX receipts_key ON receipts (key)`,
      `CREATE TABLE idempotency_records (
        id TEXT NOT NULL PRIMARY KEY,
        tool TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        payment_key TEXT NOT NULL,
        state TEXT NOT NULL CONSTRAINT idempotency_records_state_check CHECK (state IN ('in_flight', 'done')),
        result {json},
        created_at {time} NOT NULL,
        updated_at {time} NOT NULL,
        expires_at {time} NOT NULL)`,
      `CREATE INDEX idempotency_records_expires ON idempotency_records (expires_at)`,
    ],
  },
  {
    version: 2,
    name: 'daily faucet drips, placed orders',
    sql: [
      `CREATE TABLE drips (
        subject TEXT NOT NULL,
        day TEXT NOT NULL,
        count INTEGER NOT NULL CONSTRAINT drips_count_check CHECK (count >= 0),
        PRIMARY KEY (subject, day))`,
      `CREATE TABLE orders (
        order_id TEXT NOT NULL PRIMARY KEY,
        service_id INTEGER NOT NULL,
        link TEXT NOT NULL,
        quantity INTEGER NOT NULL,
        charge_usd {double} NOT NULL,
        status TEXT NOT NULL,
        payer TEXT NOT NULL,
        payment_key TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL)`,
    ],
  },
  {
    version: 3,
    name: 'agent spending (remote mode and tollbooth call budgets)',
    sql: [
      `CREATE TABLE agent_spends (
        id TEXT NOT NULL PRIMARY KEY,
        seq {sequence},
        day TEXT NOT NULL,
        tool TEXT NOT NULL,
        resource TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        network TEXT NOT NULL,
        asset TEXT NOT NULL,
        amount TEXT NOT NULL,
        usd_micros {bigint} NOT NULL CONSTRAINT agent_spends_usd_micros_check CHECK (usd_micros >= 0),
        status TEXT NOT NULL CONSTRAINT agent_spends_status_check
          CHECK (status IN ('reserved', 'settled', 'pending', 'failed', 'cancelled')),
        payment_id TEXT,
        payer TEXT,
        transaction_id TEXT,
        note TEXT,
        payload {json},
        created_at {time} NOT NULL,
        updated_at {time} NOT NULL)`,
      `CREATE INDEX agent_spends_day ON agent_spends (day, status)`,
      `CREATE INDEX agent_spends_created ON agent_spends (created_at DESC, seq DESC)`,
      `CREATE INDEX agent_spends_request ON agent_spends (request_hash, status)`,
    ],
  },
  {
    version: 4,
    name: 'rate-limit buckets shared by instances',
    sql: [
      `CREATE TABLE rate_buckets (
        key TEXT NOT NULL PRIMARY KEY,
        tat {double} NOT NULL)`,
      `CREATE INDEX rate_buckets_tat ON rate_buckets (tat)`,
    ],
  },
  {
    version: 5,
    name: 'payment protocol (x402 or MPP) of claims and receipts',
    sql: [
      `ALTER TABLE payment_claims ADD COLUMN protocol TEXT NOT NULL DEFAULT 'x402'
        CONSTRAINT payment_claims_protocol_check CHECK (protocol IN ('x402', 'mpp'))`,
      `ALTER TABLE receipts ADD COLUMN protocol TEXT NOT NULL DEFAULT 'x402'
        CONSTRAINT receipts_protocol_check CHECK (protocol IN ('x402', 'mpp'))`,
    ],
  },
  {
    version: 6,
    name: "payment protocol (x402 or MPP) of the agent's spending",
    sql: [
      `ALTER TABLE agent_spends ADD COLUMN protocol TEXT NOT NULL DEFAULT 'x402'
        CONSTRAINT agent_spends_protocol_check CHECK (protocol IN ('x402', 'mpp'))`,
    ],
  },
  {
    version: 7,
    name: 'one schema for SQLite and PostgreSQL: the replay key is replay_key everywhere; spends numbered in order',
    sql: [
      `ALTER TABLE payment_claims RENAME COLUMN key TO replay_key`,
      `ALTER TABLE receipts RENAME COLUMN key TO replay_key`,
      `DROP INDEX receipts_key`,
      `CREATE INDEX receipts_replay_key ON receipts (replay_key)`,
      `ALTER TABLE idempotency_records RENAME COLUMN payment_key TO replay_key`,
      `ALTER TABLE orders RENAME COLUMN payment_key TO replay_key`,
      `CREATE UNIQUE INDEX agent_spends_seq ON agent_spends (seq)`,
    ],
  },
  {
    version: 8,
    name: 'batch-settlement channels of the seller (one row per channel, written by compare-and-set on its revision)',
    sql: [
      `CREATE TABLE batch_channels (
        channel_id TEXT NOT NULL PRIMARY KEY,
        revision TEXT NOT NULL,
        payer TEXT NOT NULL,
        receiver TEXT NOT NULL,
        token TEXT NOT NULL,
        balance TEXT NOT NULL,
        charged TEXT NOT NULL,
        claimed TEXT NOT NULL,
        last_request_at {bigint} NOT NULL,
        pending_until {bigint},
        record {json} NOT NULL,
        updated_at {time} NOT NULL)`,
      `CREATE INDEX batch_channels_receiver ON batch_channels (receiver, token)`,
    ],
  },
  {
    version: 9,
    name: "the agent's batch-settlement channels (its client state) and deposits committed against its budget",
    sql: [
      `CREATE TABLE agent_channels (
        channel_id TEXT NOT NULL PRIMARY KEY,
        network TEXT,
        asset TEXT,
        pay_to TEXT,
        resource TEXT,
        decimals INTEGER,
        context {json},
        refunded TEXT NOT NULL DEFAULT '0',
        created_at {time} NOT NULL,
        last_used_at {time} NOT NULL,
        updated_at {time} NOT NULL)`,
      `ALTER TABLE agent_spends ADD COLUMN kind TEXT NOT NULL DEFAULT 'payment'
        CONSTRAINT agent_spends_kind_check CHECK (kind IN ('payment', 'deposit', 'voucher'))`,
      `ALTER TABLE agent_spends ADD COLUMN channel_id TEXT`,
      `CREATE INDEX agent_spends_channel ON agent_spends (channel_id, kind)`,
    ],
  },
  {
    version: 10,
    name: 'the origin and pay-to of each agent spend (per-origin caps), and the pay-to pinned per origin and network',
    sql: [
      `ALTER TABLE agent_spends ADD COLUMN origin TEXT`,
      `ALTER TABLE agent_spends ADD COLUMN pay_to TEXT`,
      `CREATE INDEX agent_spends_origin ON agent_spends (origin, day, status)`,
      `CREATE TABLE agent_pay_to_pins (
        origin TEXT NOT NULL,
        network TEXT NOT NULL,
        pay_to TEXT NOT NULL,
        created_at {time} NOT NULL,
        updated_at {time} NOT NULL,
        PRIMARY KEY (origin, network))`,
    ],
  },
  {
    version: 11,
    name: 'receipt kinds (a transfer, or which batch-settlement step) and the channel and cumulative amount of channel receipts',
    sql: [
      `ALTER TABLE receipts ADD COLUMN kind TEXT NOT NULL DEFAULT 'transfer'
        CONSTRAINT receipts_kind_check CHECK (kind IN ('transfer', 'voucher', 'deposit', 'claim', 'settle', 'refund'))`,
      `ALTER TABLE receipts ADD COLUMN channel_id TEXT`,
      `ALTER TABLE receipts ADD COLUMN cumulative_amount TEXT`,
    ],
  },
  {
    version: 12,
    name: "each agent channel's on-chain configuration (the payer's timed withdrawal needs it without the seller)",
    sql: [`ALTER TABLE agent_channels ADD COLUMN channel_config {json}`],
  },
  {
    version: 13,
    name: "the chain's word on each agent spend the seller reported settled (its authorization used or not seen)",
    sql: [
      `ALTER TABLE agent_spends ADD COLUMN chain_check TEXT
        CONSTRAINT agent_spends_chain_check_check CHECK (chain_check IN ('confirmed', 'not_seen'))`,
    ],
  },
  {
    version: 14,
    name: 'a pay-to pin held for a payment not yet sent (dropped, or the replaced pin put back, if it never goes out)',
    sql: [
      `ALTER TABLE agent_pay_to_pins ADD COLUMN spend_id TEXT`,
      `ALTER TABLE agent_pay_to_pins ADD COLUMN replaced_pay_to TEXT`,
    ],
  },
  {
    version: 15,
    name: "the process holding a voucher's claim, so a restart on the same machine decides a killed process's claim at once",
    sql: [`ALTER TABLE payment_claims ADD COLUMN owner TEXT`],
  },
];
