/** The agent's spending ledger over the SQL port, one SQL text for both dialects. */
import type {
  NewSpend,
  SpendClaimResult,
  SpendLedger,
  SpendRecord,
  SpendStatus,
  SpendUpdate,
} from '../../shared/spends.js';
import type { SqlPort } from './port.js';
import { dropPin, keepPin, originSpentOn, payToPins } from './pay-to-pins.js';
import { json, spendFromRow } from './rows.js';

/** Statuses whose amount counts against the day's budget. */
const COUNTED = "status IN ('reserved', 'settled', 'pending')";
/** A claimed or pending payment: the only ones that may still change. */
const OPEN = "status IN ('reserved', 'pending')";

async function spentOn(port: SqlPort, day: string): Promise<number> {
  const [row] = await port.read(
    `SELECT COALESCE(SUM(usd_micros), 0) AS total FROM agent_spends WHERE day = ? AND ${COUNTED}`,
    [day],
  );
  return Number(row?.total ?? 0);
}

/** No per-origin day limit: a bound no day's total reaches. */
const NO_LIMIT = Number.MAX_SAFE_INTEGER;

/**
 * One conditional insert under the spends lock (PostgreSQL: an advisory lock, so READ COMMITTED cannot let two
 * inserts each miss the other's amount; SQLite: its write lock); `seq` numbers the rows in the order they were made.
 * The day's total and the day's total of the spend's origin are both checked by the same statement.
 */
async function claimSpend(
  port: SqlPort,
  s: NewSpend,
  dayLimitMicros: number,
  originDayLimitMicros?: number,
): Promise<SpendClaimResult> {
  const now = new Date().toISOString();
  const inserted = await port.writeLocked('agent_spends', {
    sql: `INSERT INTO agent_spends (id, seq, day, tool, resource, request_hash, network, asset, amount, usd_micros, status,
            payment_id, protocol, origin, pay_to, created_at, updated_at)
          SELECT ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM agent_spends), ?, ?, ?, ?, ?, ?, ?, ?, 'reserved', ?, ?, ?, ?, ?, ?
          WHERE (SELECT COALESCE(SUM(usd_micros), 0) FROM agent_spends WHERE day = ? AND ${COUNTED}) + ? <= ?
            AND (SELECT COALESCE(SUM(usd_micros), 0) FROM agent_spends WHERE day = ? AND origin = ? AND ${COUNTED}) + ? <= ?
          RETURNING id`,
    args: [
      ...[s.id, s.day, s.tool, s.resource, s.requestHash, s.network, s.asset, s.amount, s.usdMicros],
      ...[s.paymentId ?? null, s.protocol ?? 'x402', s.origin ?? null, s.payTo ?? null, now, now],
      ...[s.day, s.usdMicros, dayLimitMicros],
      ...[s.day, s.origin ?? '', s.usdMicros, originDayLimitMicros ?? NO_LIMIT],
    ],
  });
  const spentMicros = await spentOn(port, s.day);
  if (inserted.rows.length === 1) return { type: 'reserved', spentMicros };
  if (originDayLimitMicros === undefined || s.origin === undefined) return { type: 'over_budget', spentMicros };
  return { type: 'over_budget', spentMicros, originSpentMicros: await originSpentOn(port, s.origin, s.day) };
}

async function completeSpend(port: SqlPort, id: string, u: SpendUpdate): Promise<void> {
  await port.write(
    `UPDATE agent_spends SET status = ?, payer = COALESCE(?, payer), transaction_id = COALESCE(?, transaction_id),
       note = ?, payload = ?, updated_at = ?
     WHERE id = ? AND ${OPEN}`,
    [
      u.status,
      u.payer ?? null,
      u.transaction ?? null,
      u.note ?? null,
      u.status === 'pending' || u.status === 'settled' ? json(u.payload) : null,
      new Date().toISOString(),
      id,
    ],
  );
  // A pin held for this payment stays only if the payment went out.
  await (u.status === 'failed' ? dropPin(port, id) : keepPin(port, id));
}

async function listSpends(
  port: SqlPort,
  options: { limit?: number; statuses?: readonly SpendStatus[] } = {},
): Promise<SpendRecord[]> {
  const statuses = options.statuses ?? [];
  const where = statuses.length > 0 ? `WHERE status IN (${statuses.map(() => '?').join(', ')})` : '';
  const rows = await port.read(`SELECT * FROM agent_spends ${where} ORDER BY created_at DESC, seq DESC LIMIT ?`, [
    ...statuses,
    options.limit ?? 50,
  ]);
  return rows.map(spendFromRow);
}

/** The agent's spending ledger over a SQL port. */
export function sqlSpendLedger(port: SqlPort): SpendLedger {
  return {
    claimSpend: (spend, dayLimitMicros, originDayLimitMicros) =>
      claimSpend(port, spend, dayLimitMicros, originDayLimitMicros),
    completeSpend: (id, update) => completeSpend(port, id, update),
    releaseSpend: async (id, note) => {
      await port.write(
        `UPDATE agent_spends SET status = 'cancelled', note = ?, payload = NULL, updated_at = ? WHERE id = ? AND ${OPEN}`,
        [note, new Date().toISOString(), id],
      );
      await dropPin(port, id);
    },
    setChainCheck: async (id, check, final) => {
      const drop = check === 'confirmed' || final === true ? ', payload = NULL' : '';
      // A used authorization stays used: a check that read the chain earlier never turns `confirmed` back.
      const keep = check === 'confirmed' ? '' : " AND (chain_check IS NULL OR chain_check <> 'confirmed')";
      await port.write(`UPDATE agent_spends SET chain_check = ?${drop}, updated_at = ? WHERE id = ?${keep}`, [
        check,
        new Date().toISOString(),
        id,
      ]);
    },
    spendsToRecheck: async (limit) => {
      const rows = await port.read(
        `SELECT * FROM agent_spends WHERE status = 'settled' AND kind = 'payment' AND payload IS NOT NULL
           AND (chain_check IS NULL OR chain_check = 'not_seen') ORDER BY updated_at ASC, seq ASC LIMIT ?`,
        [limit],
      );
      return rows.map(spendFromRow);
    },
    listSpends: (options) => listSpends(port, options),
    spentOn: (day) => spentOn(port, day),
    pendingSpend: async (requestHash) => {
      const [row] = await port.read(
        "SELECT * FROM agent_spends WHERE request_hash = ? AND status = 'pending' ORDER BY created_at DESC, seq DESC LIMIT 1",
        [requestHash],
      );
      return row ? spendFromRow(row) : undefined;
    },
    ...payToPins(port),
  };
}
