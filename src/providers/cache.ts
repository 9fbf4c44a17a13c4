/** One cached value with its expiry (epoch ms). */
interface Slot<V> {
  value: V;
  expiresAt: number;
}

/** A small TTL cache with a hard entry cap; the least recently used entry is evicted first. */
export class TtlLruCache<V> {
  private readonly slots = new Map<string, Slot<V>>();

  /** Creates a cache holding at most `maxEntries` values (0 disables caching). */
  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The live value under `key` (refreshing its recency), or undefined when absent or expired. */
  get(key: string): V | undefined {
    const slot = this.slots.get(key);
    if (!slot) return undefined;
    this.slots.delete(key);
    if (slot.expiresAt <= this.now()) return undefined;
    this.slots.set(key, slot);
    return slot.value;
  }

  /** Stores `value` for `ttlMs` milliseconds, evicting the least recently used entries past the cap. */
  set(key: string, value: V, ttlMs: number): void {
    if (this.maxEntries <= 0 || ttlMs <= 0) return;
    this.slots.delete(key);
    this.slots.set(key, { value, expiresAt: this.now() + ttlMs });
    while (this.slots.size > this.maxEntries) {
      const oldest = this.slots.keys().next().value;
      if (oldest === undefined) break;
      this.slots.delete(oldest);
    }
  }

  /** Number of entries held (expired ones included until touched). */
  get size(): number {
    return this.slots.size;
  }
}
