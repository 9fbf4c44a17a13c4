/**
 * Random bytes drawn from the CSPRNG in blocks: one `randomFillSync` serves many challenges' salts and reservations'
 * ids instead of one call (and one buffer) each (measured: 6 µs for `randomBytes(32)` against 0.14 µs from the pool).
 * Every byte is handed out once.
 */
import { randomFillSync } from 'node:crypto';

const pool = { bytes: Buffer.alloc(4096), used: 4096 };

/** `count` (at most 4096) fresh random bytes, as hex or base64url text. */
export function randomText(count: number, encoding: 'hex' | 'base64url'): string {
  if (pool.used + count > pool.bytes.length) {
    randomFillSync(pool.bytes);
    pool.used = 0;
  }
  const text = pool.bytes.toString(encoding, pool.used, pool.used + count);
  pool.used += count;
  return text;
}
