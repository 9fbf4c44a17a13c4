/** The shared rate-limit buckets (token buckets kept in GCRA form, see src/limits/bucket.ts). */

/** A request to claim tokens from a shared rate-limit bucket. */
export interface TokenRequest {
  /** The bucket, e.g. `ip:203.0.113.7` or `payer:0xabc…`. */
  key: string;
  /** Most tokens the bucket holds (the burst). */
  capacity: number;
  /** Tokens added back per second. */
  refillPerSecond: number;
  /** Tokens this request takes (usually 1). */
  cost: number;
  /** The caller's clock, epoch milliseconds. */
  now: number;
}

/** What claiming tokens from a shared bucket came to. */
export type TokenClaimResult = { type: 'taken'; remaining: number } | { type: 'limited'; retryAfterMs: number };

/** Rate-limit buckets shared by every process on one store. */
export interface RateBuckets {
  /**
   * Atomically claims `cost` tokens from the bucket `key` if it holds that many; concurrent callers on any number of
   * instances can never take more than the bucket holds.
   */
  claimTokens(request: TokenRequest): Promise<TokenClaimResult>;
  /** Claims from each of several buckets (each as `claimTokens` would), in one round trip to the store. */
  claimTokensFromEach(requests: readonly TokenRequest[]): Promise<TokenClaimResult[]>;
  /** Forgets buckets that are full again at `now` (epoch ms); returns how many. */
  purgeTokenBuckets(now: number): Promise<number>;
}
