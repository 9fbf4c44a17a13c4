import { expect } from 'vitest';
import { loadConfig, type UpstreamId } from '../../../src/config/config.js';
import { ToolError } from '../../../src/shared/errors.js';
import { silentLogger } from '../../../src/shared/log.js';
import { Upstream, type UpstreamSettings } from '../../../src/providers/upstream.js';

/** Environment variable holding the base URL of each upstream (so tests point the whole server at look-alikes). */
export const UPSTREAM_URL_ENV: Record<UpstreamId, string> = {
  hyperliquid: 'HYPERLIQUID_API_URL',
  stablecoins: 'DEFILLAMA_STABLECOINS_URL',
  yields: 'DEFILLAMA_YIELDS_URL',
  worldbank: 'WORLDBANK_API_URL',
  kalshi: 'KALSHI_API_URL',
  goplus: 'GOPLUS_API_URL',
  dexscreener: 'DEXSCREENER_API_URL',
  smm: 'SMM_PANEL_URL',
};

/**
 * An Upstream client for one upstream as configuration builds it (label, TTL, cache cap), pointed at a look-alike,
 * with a short timeout and a 1 ms backoff so failure tests stay fast.
 */
export function upstreamFor(id: UpstreamId, url: string, overrides: Partial<UpstreamSettings> = {}): Upstream {
  const settings = loadConfig({ [UPSTREAM_URL_ENV[id]]: url, LOG_LEVEL: 'silent' }).upstreams[id];
  return new Upstream({ ...settings, timeoutMs: 1_000, retries: 1, backoffMs: 1, ...overrides }, silentLogger);
}

/** Awaits a promise that must reject with a ToolError and returns that error. */
export async function toolFailure(promise: Promise<unknown>): Promise<ToolError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolError);
  return err as ToolError;
}
