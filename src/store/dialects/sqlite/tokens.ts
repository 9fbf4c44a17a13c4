import type { SqliteDb } from './port.js';
import { takeFrom } from '../../../limits/bucket.js';
import type { TokenRequest, TokenTake } from '../../store.js';

/** Rate-limit buckets shared by the processes using one SQLite file: one row per bucket, its GCRA time (epoch ms). */
export const TOKENS_SCHEMA = [
  `CREATE TABLE IF NOT EXISTS rate_buckets (
     key TEXT PRIMARY KEY,
     tat REAL NOT NULL)`,
];

/** The SQLite side of `Store.takeTokens`: one conditional upsert per request, so concurrent takers never overdraw. */
export class SqliteTokenBuckets {
  constructor(private readonly db: SqliteDb) {}

  /** Takes `cost` tokens if the bucket holds them (see src/limits/bucket.ts for the arithmetic). */
  async take(r: TokenRequest): Promise<TokenTake> {
    const interval = 1000 / r.refillPerSecond;
    const args = { key: r.key, now: r.now, step: r.cost * interval, limit: r.capacity * interval };
    // A new bucket starts full; an existing one moves on only while it stays within its capacity.
    const taken = await this.db.execute({
      sql: `INSERT INTO rate_buckets (key, tat) SELECT :key, :now + :step WHERE :step <= :limit
            ON CONFLICT (key) DO UPDATE SET tat = max(tat, :now) + :step WHERE max(tat, :now) + :step - :now <= :limit
            RETURNING tat`,
      args,
    });
    const row = taken.rows[0];
    if (row) return { type: 'taken', remaining: Math.floor((args.limit - (Number(row.tat) - r.now)) / interval) };
    const current = await this.db.execute({ sql: 'SELECT tat FROM rate_buckets WHERE key = ?', args: [r.key] });
    const tat = current.rows[0] ? Number(current.rows[0].tat) : undefined;
    const outcome = takeFrom(tat, r.now, r, r.cost);
    // Refilled between the two statements: say "retry at once" rather than take a token we did not record.
    return { type: 'limited', retryAfterMs: outcome.type === 'limited' ? outcome.retryAfterMs : 1 };
  }

  /** Deletes buckets that are full again at `now`. */
  async purge(now: number): Promise<number> {
    const result = await this.db.execute({ sql: 'DELETE FROM rate_buckets WHERE tat <= ?', args: [now] });
    return result.rowsAffected;
  }
}
