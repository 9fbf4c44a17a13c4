/**
 * Channel summaries and claim-round leases over the SQL port (one SQL text for both dialects). A lease is a row of
 * the rate-bucket table under a `lease:` key no limiter uses, its time the epoch millisecond it runs out: the buckets'
 * purge removes it once expired, and one conditional upsert takes it, so two instances never both hold it. Its expiry
 * is also its holder's token: a renewal or a release names the expiry it holds (a later holder's is always later).
 */
import type { BatchUpkeep, ChannelSummary } from '../batch-upkeep.js';
import type { SqlPort } from './port.js';

/** A `batch_channels` row's columns as a summary. */
function summaryOf(row: Record<string, unknown>): ChannelSummary {
  return {
    channelId: String(row.channel_id),
    payer: String(row.payer),
    receiver: String(row.receiver),
    token: String(row.token),
    balance: String(row.balance),
    charged: String(row.charged),
    claimed: String(row.claimed),
    lastRequestAt: Number(row.last_request_at),
    ...(row.pending_until === null || row.pending_until === undefined
      ? {}
      : { pendingUntil: Number(row.pending_until) }),
  };
}

/** The summaries and leases of one database (see {@link BatchUpkeep}). */
export function sqlBatchUpkeep(port: SqlPort): BatchUpkeep {
  return {
    async summaries() {
      const rows = await port.read(
        `SELECT channel_id, payer, receiver, token, balance, charged, claimed, last_request_at, pending_until
           FROM batch_channels ORDER BY channel_id`,
      );
      return rows.map(summaryOf);
    },
    async takeLease(name, until, now) {
      const written = await port.write(
        `INSERT INTO rate_buckets (key, tat) VALUES (?, ?)
           ON CONFLICT (key) DO UPDATE SET tat = excluded.tat WHERE rate_buckets.tat <= ? RETURNING key`,
        [`lease:${name}`, until, now],
      );
      return written.rows.length === 1;
    },
    async renewLease(name, held, until) {
      const written = await port.write('UPDATE rate_buckets SET tat = ? WHERE key = ? AND tat = ? RETURNING key', [
        until,
        `lease:${name}`,
        held,
      ]);
      return written.rows.length === 1;
    },
    async releaseLease(name, held) {
      await port.write('DELETE FROM rate_buckets WHERE key = ? AND tat = ?', [`lease:${name}`, held]);
    },
  };
}
