/** Idempotency records of the payment ledger, over the SQL port (one SQL text for both dialects). */
import type { IdempotencyClaim, IdempotencyClaimResult, StoredResult } from '../ledger.js';
import type { SqlPort } from './port.js';
import { fromJson, json } from './rows.js';

/** Inserts a new record or takes over an expired one, else reads the live one (again if it vanished in between). */
export async function claimIdempotency(port: SqlPort, claim: IdempotencyClaim): Promise<IdempotencyClaimResult> {
  for (;;) {
    const now = new Date().toISOString();
    // The row lock (PostgreSQL) or the write lock (SQLite) makes concurrent claims of one id take turns.
    const taken = await port.write(
      `INSERT INTO idempotency_records (id, tool, request_hash, replay_key, state, result, created_at, updated_at, expires_at)
       VALUES (?, ?, ?, ?, 'in_flight', NULL, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET tool = excluded.tool, request_hash = excluded.request_hash,
         replay_key = excluded.replay_key, state = 'in_flight', result = NULL, created_at = excluded.created_at,
         updated_at = excluded.updated_at, expires_at = excluded.expires_at
       WHERE idempotency_records.expires_at <= ?
       RETURNING id`,
      [claim.id, claim.tool, claim.requestHash, claim.replayKey, now, now, claim.expiresAt, now],
    );
    if (taken.rows.length === 1) return { type: 'new' };
    const [row] = await port.read('SELECT * FROM idempotency_records WHERE id = ? AND expires_at > ?', [claim.id, now]);
    if (!row) continue; // released or expired between the two statements
    if (row.request_hash !== claim.requestHash || row.tool !== claim.tool)
      return { type: 'conflict', reason: 'different_request' };
    if (row.replay_key !== claim.replayKey) return { type: 'conflict', reason: 'different_payment' };
    if (row.state === 'done') return { type: 'done', result: fromJson(row.result) as StoredResult };
    return { type: 'in_flight' };
  }
}

/** Stores the result of an in-flight id's call. */
export async function completeIdempotency(port: SqlPort, id: string, result: StoredResult): Promise<void> {
  await port.write(
    "UPDATE idempotency_records SET state = 'done', result = ?, updated_at = ? WHERE id = ? AND state = 'in_flight'",
    [json(result), new Date().toISOString(), id],
  );
}

/** Forgets an id that is still in flight. */
export async function releaseIdempotency(port: SqlPort, id: string): Promise<void> {
  await port.write("DELETE FROM idempotency_records WHERE id = ? AND state = 'in_flight'", [id]);
}

/** Deletes the records that expired before `now`. */
export async function purgeIdempotency(port: SqlPort, now: string): Promise<number> {
  return (await port.write('DELETE FROM idempotency_records WHERE expires_at <= ?', [now])).changes;
}
