import { iso, json, type Row } from './rows.js';
import type { NewSpend, SpendRecord, SpendReservation, SpendStatus, SpendUpdate } from '../../store.js';

/** Runs one statement. */
type Query = (sql: string, args?: unknown[]) => Promise<Row[]>;
/** Runs `fn` in one transaction on one connection. */
type Transaction = (fn: (q: Query) => Promise<void>) => Promise<void>;

/** Statuses whose amount counts against the day's budget. */
const COUNTED = "status IN ('reserved', 'settled', 'pending')";

function rowToSpend(row: Row): SpendRecord {
  const optional: Record<string, unknown> = {
    paymentId: row.payment_id,
    payer: row.payer,
    transaction: row.transaction_id,
    note: row.note,
    payload: row.payload,
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
    ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== null && v !== undefined)),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/** The spending methods of the PostgreSQL store: reservations take a per-day advisory lock, so instances and concurrent calls take turns. */
export class PostgresSpends {
  constructor(
    private readonly query: Query,
    private readonly transaction: Transaction,
  ) {}

  async spentOn(day: string): Promise<number> {
    const [row] = await this.query(
      `SELECT COALESCE(SUM(usd_micros), 0) AS total FROM agent_spends WHERE day = $1 AND ${COUNTED}`,
      [day],
    );
    return Number(row?.total ?? 0);
  }

  async reserve(s: NewSpend, dayLimitMicros: number): Promise<SpendReservation> {
    let reserved = false;
    let spentMicros = 0;
    await this.transaction(async (q) => {
      // READ COMMITTED would let two inserts each see the other's sum missing; the lock makes reservations of one day take turns.
      await q("SELECT pg_advisory_xact_lock(hashtext('tollbooth.agent_spends'), hashtext($1))", [s.day]);
      const [row] = await q(
        `SELECT COALESCE(SUM(usd_micros), 0) AS total FROM agent_spends WHERE day = $1 AND ${COUNTED}`,
        [s.day],
      );
      spentMicros = Number(row?.total ?? 0);
      if (spentMicros + s.usdMicros > dayLimitMicros) return;
      const now = new Date().toISOString();
      await q(
        `INSERT INTO agent_spends (id, day, tool, resource, request_hash, network, asset, amount, usd_micros, status, payment_id, protocol, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'reserved', $10, $12, $11, $11)`,
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
          s.paymentId ?? null,
          now,
          s.protocol ?? 'x402',
        ],
      );
      reserved = true;
      spentMicros += s.usdMicros;
    });
    return reserved ? { type: 'reserved', spentMicros } : { type: 'over_budget', spentMicros };
  }

  async finish(id: string, u: SpendUpdate): Promise<void> {
    await this.query(
      `UPDATE agent_spends SET status = $2, payer = COALESCE($3, payer), transaction_id = COALESCE($4, transaction_id), note = $5,
         payload = $6::json, updated_at = $7
       WHERE id = $1 AND status IN ('reserved', 'pending')`,
      [
        id,
        u.status,
        u.payer ?? null,
        u.transaction ?? null,
        u.note ?? null,
        u.status === 'pending' ? json(u.payload) : null,
        new Date().toISOString(),
      ],
    );
  }

  async cancel(id: string, note: string): Promise<void> {
    await this.query(
      "UPDATE agent_spends SET status = 'cancelled', note = $2, payload = NULL, updated_at = $3 WHERE id = $1 AND status IN ('reserved', 'pending')",
      [id, note, new Date().toISOString()],
    );
  }

  async list(options: { limit?: number; statuses?: readonly SpendStatus[] } = {}): Promise<SpendRecord[]> {
    const statuses = options.statuses ?? [];
    const where = statuses.length > 0 ? 'WHERE status = ANY($2::text[])' : '';
    const args: unknown[] = [options.limit ?? 50, ...(statuses.length > 0 ? [statuses] : [])];
    const rows = await this.query(
      `SELECT * FROM agent_spends ${where} ORDER BY created_at DESC, seq DESC LIMIT $1`,
      args,
    );
    return rows.map(rowToSpend);
  }

  async pending(requestHash: string): Promise<SpendRecord | undefined> {
    const [row] = await this.query(
      "SELECT * FROM agent_spends WHERE request_hash = $1 AND status = 'pending' ORDER BY created_at DESC, seq DESC LIMIT 1",
      [requestHash],
    );
    return row ? rowToSpend(row) : undefined;
  }
}
