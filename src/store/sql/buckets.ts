/** Rate-limit buckets shared by every process on one store, over the SQL port, one SQL text for both dialects. */
import { takeFrom } from '../../limits/bucket.js';
import type { RateBuckets, TokenClaimResult, TokenRequest } from '../buckets.js';
import type { SqlPort, Statement } from './port.js';

const FLOAT = 'CAST(? AS DOUBLE PRECISION)';

/**
 * One conditional upsert (the row or write lock serializes concurrent takers): a new bucket starts full, an existing
 * one moves on only while it stays within its capacity. See src/limits/bucket.ts for the arithmetic.
 */
function upsert(r: TokenRequest): Statement {
  const interval = 1000 / r.refillPerSecond;
  const [now, step, limit] = [r.now, r.cost * interval, r.capacity * interval];
  const later = `CASE WHEN rate_buckets.tat > ${FLOAT} THEN rate_buckets.tat ELSE ${FLOAT} END + ${FLOAT}`;
  return {
    sql: `INSERT INTO rate_buckets (key, tat) SELECT ?, ${FLOAT} + ${FLOAT} WHERE ${FLOAT} <= ${FLOAT}
          ON CONFLICT (key) DO UPDATE SET tat = ${later} WHERE ${later} - ${FLOAT} <= ${FLOAT}
          RETURNING tat`,
    args: [r.key, now, step, step, limit, now, now, step, now, now, step, now, limit],
  };
}

/** What a request came to, from the bucket's new time (taken) or its current one (limited). */
async function outcome(port: SqlPort, r: TokenRequest, tat: unknown): Promise<TokenClaimResult> {
  const interval = 1000 / r.refillPerSecond;
  if (tat !== null && tat !== undefined)
    return { type: 'taken', remaining: Math.floor((r.capacity * interval - (Number(tat) - r.now)) / interval) };
  // Limited (the rare path): when to retry comes from the bucket as it stands.
  const [current] = await port.read('SELECT tat FROM rate_buckets WHERE key = ?', [r.key]);
  const answer = takeFrom(current ? Number(current.tat) : undefined, r.now, r, r.cost);
  // Refilled between the two statements: say "retry at once" rather than take a token we did not record.
  return { type: 'limited', retryAfterMs: answer.type === 'limited' ? answer.retryAfterMs : 1 };
}

async function claimTokensFromEach(port: SqlPort, requests: readonly TokenRequest[]): Promise<TokenClaimResult[]> {
  if (requests.length === 0) return [];
  const taken = await port.writeEach(requests.map(upsert));
  return Promise.all(requests.map((r, i) => outcome(port, r, taken[i]?.[0]?.tat)));
}

/** Rate buckets over a SQL port. */
export function sqlRateBuckets(port: SqlPort): RateBuckets {
  return {
    claimTokens: async (request) => (await claimTokensFromEach(port, [request]))[0]!,
    claimTokensFromEach: (requests) => claimTokensFromEach(port, requests),
    purgeTokenBuckets: async (now) => (await port.write('DELETE FROM rate_buckets WHERE tat <= ?', [now])).changes,
  };
}
