import { takeFrom } from '../../../limits/bucket.js';
import type { Row } from './rows.js';
import type { TokenRequest, TokenTake } from '../../store.js';

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

  /** Takes from several buckets with one statement (one round trip): each bucket's upsert is a CTE of it. */
  async takeEach(requests: readonly TokenRequest[]): Promise<TokenTake[]> {
    if (requests.length === 0) return [];
    const args: unknown[] = [];
    const ctes = requests.map((r, i) => {
      const interval = 1000 / r.refillPerSecond;
      args.push(r.key, r.now, r.cost * interval, r.capacity * interval);
      const [key, now, step, limit] = [1, 2, 3, 4].map((n) => `$${i * 4 + n}`);
      return `t${i} AS (INSERT INTO rate_buckets (key, tat) SELECT ${key}, ${now}::float8 + ${step}::float8 WHERE ${step}::float8 <= ${limit}::float8
         ON CONFLICT (key) DO UPDATE SET tat = GREATEST(rate_buckets.tat, ${now}::float8) + ${step}::float8
           WHERE GREATEST(rate_buckets.tat, ${now}::float8) + ${step}::float8 - ${now}::float8 <= ${limit}::float8
         RETURNING tat)`;
    });
    const [row] = await this.query(
      `WITH ${ctes.join(', ')} SELECT ${requests.map((_, i) => `(SELECT tat FROM t${i}) AS t${i}`).join(', ')}`,
      args,
    );
    return Promise.all(
      requests.map(async (r, i) => {
        const tat = row?.[`t${i}`];
        const interval = 1000 / r.refillPerSecond;
        if (tat !== null && tat !== undefined)
          return {
            type: 'taken',
            remaining: Math.floor((r.capacity * interval - (Number(tat) - r.now)) / interval),
          } as TokenTake;
        // Limited (the rare path): when to retry comes from the bucket as it stands.
        const [current] = await this.query('SELECT tat FROM rate_buckets WHERE key = $1', [r.key]);
        const outcome = takeFrom(current ? Number(current.tat) : undefined, r.now, r, r.cost);
        return { type: 'limited', retryAfterMs: outcome.type === 'limited' ? outcome.retryAfterMs : 1 } as TokenTake;
      }),
    );
  }

  /** Deletes buckets that are full again at `now`. */
  async purge(now: number): Promise<number> {
    const rows = await this.query('DELETE FROM rate_buckets WHERE tat <= $1 RETURNING key', [now]);
    return rows.length;
  }
}
