/**
 * Sellers you do not know: the per-origin settings of the agent side (docs/agents.md, "Sellers you do not know"). An
 * allow-list of origins (AGENT_ORIGINS; unset, any), per-origin caps per call and per UTC day beside the global ones
 * (AGENT_ORIGIN_LIMITS, `*` for every origin not named), and the price-drift tolerance (AGENT_PRICE_DRIFT, percent).
 */
import { list } from '../shared/env.js';

/** One origin's caps in dollars; either may be unset (then only the global limit applies). */
export interface OriginCaps {
  perCallUsd?: number;
  perDayUsd?: number;
}

/** What the agent allows each seller's origin. */
export interface OriginSettings {
  /** Origins the agent may pay (AGENT_ORIGINS); unset, any. */
  allowed?: string[];
  /** Caps by origin (`*`: every origin not named), from AGENT_ORIGIN_LIMITS. */
  limits: Record<string, OriginCaps>;
  /** A price above the expected one by more than this many percent is refused (AGENT_PRICE_DRIFT). */
  driftPercent: number;
}

/** Default price-drift tolerance, in percent. */
export const DEFAULT_PRICE_DRIFT_PERCENT = 10;

/** The origin (`scheme://host[:port]`, lower case, default port left out) of a URL; throws naming `what` when it is not one. */
export function originOf(url: string, what = 'the URL'): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`${what} "${url}" is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`${what} must be http or https`);
  return parsed.origin;
}

/** A dollar amount of AGENT_ORIGIN_LIMITS, or undefined for an empty part; throws on anything else. */
function dollars(text: string, entry: string): number | undefined {
  if (text.trim() === '') return undefined;
  const value = Number(text);
  if (!/^\s*\d+(\.\d+)?\s*$/.test(text) || !Number.isFinite(value) || value > 1_000_000) {
    throw new Error(`AGENT_ORIGIN_LIMITS entry "${entry}" must be <origin>=<per call>/<per day> in dollars`);
  }
  return value;
}

/** AGENT_ORIGIN_LIMITS read: `origin=perCall/perDay` entries, comma-separated (`*` for any other origin). */
function parseOriginLimits(value: string | undefined): Record<string, OriginCaps> {
  const limits: Record<string, OriginCaps> = {};
  for (const entry of list(value) ?? []) {
    const eq = entry.lastIndexOf('=');
    if (eq <= 0) throw new Error(`AGENT_ORIGIN_LIMITS entry "${entry}" must be <origin>=<per call>/<per day>`);
    const name = entry.slice(0, eq).trim();
    const origin = name === '*' ? '*' : originOf(name, 'an AGENT_ORIGIN_LIMITS origin');
    const [call = '', day = '', ...rest] = entry.slice(eq + 1).split('/');
    if (rest.length > 0) throw new Error(`AGENT_ORIGIN_LIMITS entry "${entry}" has more than two limits`);
    const perCallUsd = dollars(call, entry);
    const perDayUsd = dollars(day, entry);
    if (origin in limits) throw new Error(`AGENT_ORIGIN_LIMITS names ${origin} twice`);
    limits[origin] = {
      ...(perCallUsd !== undefined ? { perCallUsd } : {}),
      ...(perDayUsd !== undefined ? { perDayUsd } : {}),
    };
  }
  return limits;
}

/** AGENT_ORIGINS read: the origins of the URLs listed; unset or empty, any origin. */
function parseAllowedOrigins(value: string | undefined): string[] | undefined {
  const items = list(value);
  if (!items || items.length === 0) return undefined;
  return items.map((item) => originOf(item, 'an AGENT_ORIGINS entry'));
}

/** AGENT_PRICE_DRIFT read: a percentage (`10` or `10%`); unset, 10. */
function parseDrift(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return DEFAULT_PRICE_DRIFT_PERCENT;
  const match = /^\s*(\d+(?:\.\d+)?)\s*%?\s*$/.exec(value);
  if (!match || Number(match[1]) > 1_000_000) throw new Error('AGENT_PRICE_DRIFT must be a percentage, e.g. 10 or 10%');
  return Number(match[1]);
}

/** The per-origin settings from the three variables; throws an Error naming the variable. */
export function originSettings(env: {
  AGENT_ORIGINS?: string | undefined;
  AGENT_ORIGIN_LIMITS?: string | undefined;
  AGENT_PRICE_DRIFT?: string | undefined;
}): OriginSettings {
  const allowed = parseAllowedOrigins(env.AGENT_ORIGINS);
  return {
    ...(allowed ? { allowed } : {}),
    limits: parseOriginLimits(env.AGENT_ORIGIN_LIMITS),
    driftPercent: parseDrift(env.AGENT_PRICE_DRIFT),
  };
}

/** The caps of one origin: its own entry, else the `*` entry, else none. */
export function capsOf(settings: OriginSettings | undefined, origin: string): OriginCaps {
  return settings?.limits[origin] ?? settings?.limits['*'] ?? {};
}

/** Whether the agent may pay this origin (AGENT_ORIGINS unset allows any). */
export function originAllowed(settings: OriginSettings | undefined, origin: string): boolean {
  return settings?.allowed === undefined || settings.allowed.includes(origin);
}

/** The most a price may be (millionths) for an expected price under a drift of `percent`. */
export function driftCeiling(expectedMicros: number, percent: number): number {
  return Math.floor((expectedMicros * (100 + percent)) / 100);
}

/**
 * The price a catalog published for a tool, in millionths of a dollar: `_meta["x402/price"].usd` as Tollbooth's MCP
 * tools/list gives it (a number) or as a `/.well-known/x402` item's `price` (a decimal string); undefined otherwise.
 */
export function publishedPriceMicros(meta: unknown): number | undefined {
  const price = (meta as { 'x402/price'?: { usd?: unknown } } | undefined)?.['x402/price'];
  const value = price?.usd;
  const dollars = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  return Number.isFinite(dollars) && dollars > 0 ? Math.round(dollars * 1e6) : undefined;
}
