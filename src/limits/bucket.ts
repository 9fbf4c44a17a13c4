/**
 * Token buckets in their GCRA form: a bucket is one number, the "theoretical arrival time" (TAT, epoch ms) at which
 * it would be full again. Taking `cost` tokens moves the TAT on by `cost` token intervals and is allowed while the
 * bucket would not go below empty, i.e. while `max(tat, now) + cost·interval − now ≤ capacity·interval`. This is a
 * token bucket of `capacity` tokens refilled at `refillPerSecond`, kept in one value, so a database can update it
 * with a single conditional upsert (see `claimTokens` in src/store/sql/buckets.ts).
 */

/** A bucket's size and refill rate. */
export interface BucketRate {
  /** Most tokens the bucket holds (the burst). */
  capacity: number;
  /** Tokens added back per second. */
  refillPerSecond: number;
}

/** What taking tokens from a bucket came to. */
export type TakeOutcome = { type: 'taken'; tat: number; remaining: number } | { type: 'limited'; retryAfterMs: number };

/** Milliseconds one token takes to come back. */
export function tokenIntervalMs(rate: BucketRate): number {
  return 1000 / rate.refillPerSecond;
}

/** Takes `cost` tokens from a bucket whose TAT is `tat` (undefined: a full, never used bucket) at time `now` (ms). */
export function takeFrom(tat: number | undefined, now: number, rate: BucketRate, cost = 1): TakeOutcome {
  const interval = tokenIntervalMs(rate);
  const next = Math.max(tat ?? now, now) + cost * interval;
  const limit = rate.capacity * interval;
  if (next - now <= limit)
    return { type: 'taken', tat: next, remaining: Math.floor((limit - (next - now)) / interval) };
  // A cost above the capacity can never be served; report the time until the bucket is full.
  const wait = cost > rate.capacity ? Math.max(tat ?? now, now) - now + interval : next - now - limit;
  return { type: 'limited', retryAfterMs: Math.max(1, Math.ceil(wait)) };
}

/** Options of an in-memory set of buckets. */
export interface MemoryBucketsOptions {
  /** Most buckets kept; past it the oldest are dropped (a dropped bucket starts full again). Default 100,000. */
  maxKeys?: number;
}

/** Buckets kept in this process, by key: the fast path, one Map lookup per request. */
export class MemoryBuckets {
  private readonly tats = new Map<string, number>();
  private readonly maxKeys: number;

  constructor(options: MemoryBucketsOptions = {}) {
    this.maxKeys = options.maxKeys ?? 100_000;
  }

  /** Takes `cost` tokens from the bucket `key`. */
  take(key: string, now: number, rate: BucketRate, cost = 1): TakeOutcome {
    const outcome = takeFrom(this.tats.get(key), now, rate, cost);
    if (outcome.type === 'taken') {
      // Re-insert so Map order is least recently used first.
      this.tats.delete(key);
      this.tats.set(key, outcome.tat);
      if (this.tats.size > this.maxKeys) this.tats.delete(this.tats.keys().next().value as string);
    }
    return outcome;
  }

  /** Forgets buckets that are full again at `now` (a missing bucket is a full one); returns how many. */
  sweep(now: number): number {
    let removed = 0;
    for (const [key, tat] of this.tats) {
      if (tat <= now) {
        this.tats.delete(key);
        removed++;
      }
    }
    return removed;
  }

  /** How many buckets are kept. */
  get size(): number {
    return this.tats.size;
  }
}
