import type { Row, SqliteDb } from './port.js';
import type { NewSpend, SpendRecord, SpendReservation, SpendStatus, SpendUpdate } from '../../store.js';

/** The agent's payments (remote mode, `tollbooth call`): its daily budget and spending history. */
export const SPENDS_SCHEMA = [
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
];

/** Stores written before MPP have no protocol column: every payment they hold was made with x402. */
export const SPENDS_PROTOCOL_COLUMN = {
  table: 'agent_spends',
  sql: `ALTER TABLE agent_spends ADD COLUMN protocol TEXT NOT NULL DEFAULT 'x402'`,
} as const;

/** Statuses whose amount counts against the day's budget. */
const COUNTED = "status IN ('reserved', 'settled', 'pending')";

const text = (v: unknown) => (v === null || v === undefined ? undefined : String(v));

function rowToSpend(row: Row): SpendRecord {
  const optional = {
    paymentId: text(row.payment_id),
    payer: text(row.payer),
    transaction: text(row.transaction_id),
    note: text(row.note),
    payload:
      row.payload_json === null || row.payload_json === undefined
        ? undefined
        : (JSON.parse(String(row.payload_json)) as unknown),
  };
  return {
    id: String(row.id),
    day: String(row.day),
    tool: String(row.tool),
    resource: String(row.resource),
    requestHash: String(row.request_hash),
    network: String(row.network),
    asset: String(row.asset),
    amount: String(row.amount),
    usdMicros: Number(row.usd_micros),
    status: String(row.status) as SpendStatus,
    protocol: row.protocol === 'mpp' ? 'mpp' : 'x402',
    ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)),
    createdAt: String(row.created_at),
    updatedAt: String(row.updated_at),
  };
}

/** The spending methods of the SQLite store, on its one connection. */
export class SqliteSpends {
  constructor(private readonly db: SqliteDb) {}

  async spentOn(day: string): Promise<number> {
    const result = await this.db.execute({
      sql: `SELECT COALESCE(SUM(usd_micros), 0) AS total FROM agent_spends WHERE day = ? AND ${COUNTED}`,
      args: [day],
    });
    return Number(result.rows[0]?.total ?? 0);
  }

  async reserve(s: NewSpend, dayLimitMicros: number): Promise<SpendReservation> {
    const now = new Date().toISOString();
    // One statement: a writing statement takes the database's write lock before it reads, so the sum it checks is current.
    const inserted = await this.db.execute({
      sql: `INSERT INTO agent_spends (id, day, tool, resource, request_hash, network, asset, amount, usd_micros, status, payment_id, protocol, created_at, updated_at)
            SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, 'reserved', ?, ?, ?, ?
            WHERE (SELECT COALESCE(SUM(usd_micros), 0) FROM agent_spends WHERE day = ? AND ${COUNTED}) + ? <= ?
            RETURNING id`,
      args: [
        s.id,
        s.day,
        s.tool,
        s.resource,
        s.requestHash,
        s.network,
        s.asset,
        s.amount,
        s.usdMicros,
        s.paymentId ?? null,
        s.protocol ?? 'x402',
        now,
        now,
        s.day,
        s.usdMicros,
        dayLimitMicros,
      ],
    });
    const spentMicros = await this.spentOn(s.day);
    return inserted.rows.length === 1 ? { type: 'reserved', spentMicros } : { type: 'over_budget', spentMicros };
  }

  async finish(id: string, u: SpendUpdate): Promise<void> {
    await this.db.execute({
      sql: `UPDATE agent_spends SET status = ?, payer = COALESCE(?, payer), transaction_id = COALESCE(?, transaction_id), note = ?,
              payload_json = ?, updated_at = ?
            WHERE id = ? AND status IN ('reserved', 'pending')`,
      args: [
        u.status,
        u.payer ?? null,
        u.transaction ?? null,
        u.note ?? null,
        u.status === 'pending' && u.payload !== undefined ? JSON.stringify(u.payload) : null,
        new Date().toISOString(),
        id,
      ],
    });
  }

  async cancel(id: string, note: string): Promise<void> {
    await this.db.execute({
      sql: "UPDATE agent_spends SET status = 'cancelled', note = ?, payload_json = NULL, updated_at = ? WHERE id = ? AND status IN ('reserved', 'pending')",
      args: [note, new Date().toISOString(), id],
    });
  }

  async list(options: { limit?: number; statuses?: readonly SpendStatus[] } = {}): Promise<SpendRecord[]> {
    const statuses = options.statuses ?? [];
    const where = statuses.length > 0 ? `WHERE status IN (${statuses.map(() => '?').join(', ')})` : '';
    const result = await this.db.execute({
      sql: `SELECT * FROM agent_spends ${where} ORDER BY created_at DESC, rowid DESC LIMIT ?`,
      args: [...statuses, options.limit ?? 50],
    });
    return result.rows.map(rowToSpend);
  }

  async pending(requestHash: string): Promise<SpendRecord | undefined> {
    const result = await this.db.execute({
      sql: "SELECT * FROM agent_spends WHERE request_hash = ? AND status = 'pending' ORDER BY created_at DESC, rowid DESC LIMIT 1",
      args: [requestHash],
    });
    const row = result.rows[0];
    return row ? rowToSpend(row) : undefined;
  }
}
