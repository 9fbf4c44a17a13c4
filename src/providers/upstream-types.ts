import type { z } from 'zod';
import type { ToolError } from '../shared/errors.js';
import type { AttemptFailure } from './attempt.js';

/** Settings of one upstream (from config). */
export interface UpstreamSettings {
  /** Short id used in logs and errors, e.g. "hyperliquid". */
  name: string;
  /** Human name used in error messages and `source` fields, e.g. "Hyperliquid info API". */
  label: string;
  /** Base URL from config, so operators point at mirrors and tests at look-alikes. */
  baseUrl: string;
  /** Time limit per attempt, body included. */
  timeoutMs: number;
  /** Extra attempts on retryable failures only (429 honouring Retry-After, 5xx, network errors, timeouts). */
  retries: number;
  /** Default TTL of cached responses. */
  cacheTtlMs: number;
  /** Memory cap: most responses kept (least recently used evicted first). */
  cacheMaxEntries: number;
  /** First backoff delay between attempts (doubles each retry, randomised); default 250 ms. */
  backoffMs?: number;
}

/**
 * What a call needs that the operator has not configured: the settings that would provide it and the caller's message.
 * A tool declares it (`needs`), and the pipeline answers 501 not_implemented with it before any payment is asked for.
 */
export interface Unconfigured {
  /** The environment variables the operator sets to make the call possible, e.g. `SMM_PANEL_URL`. */
  settings: string[];
  /** What is unavailable and which settings provide it, for the caller. */
  message: string;
}

/** One upstream answer: the parsed data, when it was fetched from the upstream, and whether it came from our cache. */
export interface Fetched<T> {
  data: T;
  fetchedAt: string;
  cached: boolean;
}

/** One upstream request. */
export interface UpstreamRequest<S extends z.ZodType> {
  /** Default GET. */
  method?: 'GET' | 'POST';
  /** Joined to baseUrl. */
  path: string;
  query?: Record<string, string | number | undefined>;
  /** JSON body for POST. */
  body?: unknown;
  /** Form fields for POST, sent `application/x-www-form-urlencoded` instead of a JSON body. */
  form?: Record<string, string>;
  /**
   * A request that must reach the upstream at most once (it changes state, e.g. places an order): never served from
   * or written to the cache, never joined with an identical request in flight, never retried.
   */
  once?: boolean;
  /** Extra request headers, e.g. `authorization` (never logged, not part of the cache key). */
  headers?: Record<string, string>;
  /** The response is validated on the way in; failure → upstream_invalid. */
  schema: S;
  /** Overrides cacheTtlMs; 0 = do not cache. */
  ttlMs?: number;
  /** Caller cancellation (not retried). */
  signal?: AbortSignal;
  /**
   * Maps an upstream answer that is an error in disguise (e.g. HTTP 200 with an error body, 404) to a ToolError;
   * return undefined to accept it. Sees every answer except 429 (`json` is undefined when the body is not JSON).
   * Returning an `AttemptFailure` instead retries the disguised error like a 5xx or 429 (e.g. a server error sent
   * with HTTP 200).
   */
  interpret?: (status: number, json: unknown) => ToolError | AttemptFailure | undefined;
  /**
   * Reads a 429 answer's body: a ToolError answers instead of the generic rate-limit failure (e.g. a daily cap that
   * no retry cures); undefined keeps the generic one (retried, then upstream_rate_limited with its Retry-After).
   */
  rateLimited?: (json: unknown) => ToolError | undefined;
}

/** Where an Upstream reports cacheable lookups (hit or not) and requests failed for good, by code (metrics; cancellations not counted). */
export interface UpstreamMetrics {
  cacheLookup(upstream: string, hit: boolean): void;
  failed(upstream: string, code: string): void;
}
