import { takeFrom } from '../limits/bucket.js';
import type { Row } from './postgres-rows.js';
import type { TokenRequest, TokenTake } from './store.js';

/** Runs one statement. */
type Query = (sql: string, args?: unknown[]) => Promise<Row[]>;

/**
 * The PostgreSQL side of `Store.takeTokens`, shared by every instance on one database: one conditional upsert per
 * request (the row lock serializes concurrent takers), so together they never take more than a bucket holds.
 */
export class PostgresTokenBuckets {
  constructor(private readonly query: Query) {}

  /** Takes `cost` tokens if the bucket holds them (see src/limits/bucket.ts for the arithmetic). */
  async take(r: TokenRequest): Promise<TokenTake> {
    const interval = 1000 / r.refillPerSecond;
    const step = r.cost * interval;
    const limit = r.capacity * interval;
    const [row] = await this.query(
      `INSERT INTO rate_buckets (key, tat) SELECT $1, $2::float8 + $3::float8 WHERE $3::float8 <= $4::float8
       ON CONFLICT (key) DO UPDATE SET tat = GREATEST(rate_buckets.tat, $2::float8) + $3::float8
         WHERE GREATEST(rate_buckets.tat, $2::float8) + $3::float8 - $2::float8 <= $4::float8
       RETURNING tat`,
      [r.key, r.now, step, limit],
    );
    if (row) return { type: 'taken', remaining: Math.floor((limit - (Number(row.tat) - r.now)) / interval) };
    const [current] = await this.query('SELECT tat FROM rate_buckets WHERE key = $1', [r.key]);
    const outcome = takeFrom(current ? Number(current.tat) : undefined, r.now, r, r.cost);
    // Refilled between the two statements: say "retry at once" rather than take a token we did not record.
    return { type: 'limited', retryAfterMs: outcome.type === 'limited' ? outcome.retryAfterMs : 1 };
  }

  /** Deletes buckets that are full again at `now`. */
  async purge(now: number): Promise<number> {
    const rows = await this.query('DELETE FROM rate_buckets WHERE tat <= $1 RETURNING key', [now]);
    return rows.length;
  }
}
