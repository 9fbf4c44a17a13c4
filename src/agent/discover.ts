/**
 * Finding services: reads the discovery indexes in AGENT_DISCOVERY_URLS — a Bazaar-style discovery API
 * (`GET <base>/discovery/resources?type=http`, page after page within bounds), else any origin's `/.well-known/x402`, else its OpenAPI document's
 * operations with `x-payment-info` (openapi-source.ts) — and keeps the items whose name, description or URL hold
 * every query word. Items are data: read, bounded and summarised, never compiled.
 */
import type { PaymentRequirements } from '@x402/core/types';
import type { NetworkEntry } from '../shared/networks.js';
import { priceOptions, usd } from './choose.js';
import { httpResource, isObject, readWellKnown } from './documents.js';
import { readDiscoveryPages, type PagesRead } from './discovery-pages.js';
import { canonicalNetwork } from './networks.js';
import { probeOpenApi } from './openapi-source.js';
import type { Wallets } from './wallets.js';

/** One service found: what it is, where it is, what it costs (USD range over the assets the agent can value). */
export interface FoundService {
  name: string;
  description?: string;
  resource: string;
  origin: string;
  networks: string[];
  /** Cheapest and dearest price in US dollars; absent when no advertised asset can be valued. */
  price?: { min: string; max: string };
  /** The index it was found in. */
  index: string;
}

/** Bounds on one search. */
export interface DiscoverLimits {
  /** At most this many services returned. */
  maxItems: number;
  /** Largest single document read (a `/.well-known/x402` or OpenAPI document), in bytes. */
  maxBytes: number;
  /** Time limit per index (all the pages of a discovery API together). */
  timeoutMs: number;
  /** Most pages read from one discovery API. */
  maxPages: number;
  /** Most bytes read over all the pages of one discovery API. */
  maxIndexBytes: number;
}

/** The default bounds: 20 results; per index 10 s, 20 pages of 100 items, 5 MB over all pages, 1 MB per document. */
export const DISCOVER_LIMITS: DiscoverLimits = {
  maxItems: 20,
  maxBytes: 1_000_000,
  timeoutMs: 10_000,
  maxPages: 20,
  maxIndexBytes: 5_000_000,
};

/** What a search values prices with. */
export interface DiscoverDeps {
  networks: readonly NetworkEntry[];
  wallets: Wallets;
}

/**
 * The raw items of one index: the discovery API's pages (read until `enough` says so, the index ends or a bound is
 * hit, discovery-pages.ts), else the origin's `/.well-known/x402` items.
 */
async function indexItems(
  base: string,
  limits: DiscoverLimits,
  enough: (items: readonly unknown[], at: string) => boolean,
): Promise<PagesRead> {
  const trimmed = base.replace(/\/+$/, '');
  const pages = {
    pageSize: Math.min(limits.maxItems * 5, 1000),
    maxPages: limits.maxPages,
    maxBytes: limits.maxIndexBytes,
    timeoutMs: limits.timeoutMs,
  };
  try {
    return await readDiscoveryPages(trimmed, pages, enough);
  } catch {
    // not a discovery API: try the origin's well-known document
  }
  return readWellKnown(trimmed, { timeoutMs: limits.timeoutMs, maxBytes: limits.maxBytes });
}

/** The paid operations of an origin's OpenAPI document as services (prices as published; networks are not). */
async function openApiServices(base: string, limits: DiscoverLimits): Promise<FoundService[]> {
  const { at, items } = await probeOpenApi(base, {
    timeoutMs: limits.timeoutMs,
    maxTools: limits.maxItems * 50,
    maxDocumentBytes: limits.maxBytes,
  });
  return items.map((item) => {
    const url = new URL(item.request({}).url);
    const published = (item._meta?.['x402/price'] as { usd?: string } | undefined)?.usd;
    const price = published === undefined ? undefined : usd(Math.round(Number(published) * 1e6));
    return {
      name: item.name,
      ...(item.description ? { description: item.description.slice(0, 1000) } : {}),
      resource: url.href,
      origin: url.origin,
      networks: [],
      ...(price ? { price: { min: price, max: price } } : {}),
      index: at,
    };
  });
}

/** What one index gave: its services, and why its pages stopped early (if a later page failed). */
interface IndexRead {
  services: FoundService[];
  failed?: string;
}

/**
 * The services of one index: its discovery API's pages (followed until `limits.maxItems` of them hold the query
 * words) or its `/.well-known/x402` items, else its OpenAPI operations.
 */
async function indexServices(
  base: string,
  words: readonly string[],
  limits: DiscoverLimits,
  deps: DiscoverDeps,
): Promise<IndexRead> {
  let checked = 0;
  let found = 0;
  const enough = (items: readonly unknown[], at: string) => {
    for (; checked < items.length; checked++) {
      const service = toService(items[checked], at, deps);
      if (service && matches(service, words)) found++;
    }
    return found >= limits.maxItems;
  };
  let listed: PagesRead;
  try {
    listed = await indexItems(base, limits, enough);
  } catch (err) {
    try {
      return { services: await openApiServices(base.replace(/\/+$/, ''), limits) };
    } catch {
      throw err;
    }
  }
  const services = listed.items
    .map((raw) => toService(raw, listed.at, deps))
    .filter((s): s is FoundService => s !== undefined);
  return { services, ...(listed.failed ? { failed: listed.failed } : {}) };
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v ? v.slice(0, 1000) : undefined);

/** One raw item as a service (undefined when it is not an http(s) resource). */
function toService(raw: unknown, at: string, deps: DiscoverDeps): FoundService | undefined {
  const found = httpResource(raw, at);
  if (!found) return undefined;
  const { item, url } = found;
  const accepts = (Array.isArray(item.accepts)
    ? item.accepts.filter(isObject)
    : []) as unknown as PaymentRequirements[];
  const metadata = isObject(item.metadata) ? item.metadata : {};
  const description =
    text(item.description) ??
    text(metadata.description) ??
    text((accepts[0] as { description?: unknown } | undefined)?.description);
  const name = text(item.name) ?? text(metadata.name) ?? url.pathname.split('/').filter(Boolean).pop() ?? url.host;
  const version = typeof item.x402Version === 'number' ? item.x402Version : 2;
  const priced = priceOptions(accepts, version, deps.wallets, {
    networks: deps.networks,
    preference: [],
    maxMicrosPerCall: Number.MAX_SAFE_INTEGER,
  });
  const micros = priced.map((p) => p.usdMicros).filter((m): m is number => m !== undefined);
  return {
    name,
    ...(description ? { description } : {}),
    resource: url.href,
    origin: url.origin,
    networks: [...new Set(accepts.map((a) => canonicalNetwork(String(a.network))))],
    ...(micros.length > 0 ? { price: { min: usd(Math.min(...micros)), max: usd(Math.max(...micros)) } } : {}),
    index: at,
  };
}

/** Whether a service holds every query word (case-insensitive) in its name, description or URL. */
function matches(service: FoundService, words: readonly string[]): boolean {
  const hay = `${service.name} ${service.description ?? ''} ${service.resource}`.toLowerCase();
  return words.every((w) => hay.includes(w.toLowerCase()));
}

/** Searches every index; an index that fails is reported in `errors` (its text is not echoed), the others still answer. */
export async function searchServices(
  indexes: readonly string[],
  words: readonly string[],
  deps: DiscoverDeps,
  limits: DiscoverLimits = DISCOVER_LIMITS,
): Promise<{ services: FoundService[]; errors: string[] }> {
  const read = await Promise.allSettled(indexes.map((base) => indexServices(base, words, limits, deps)));
  const services: FoundService[] = [];
  const errors: string[] = [];
  read.forEach((r, i) => {
    if (r.status === 'rejected') return void errors.push(`${indexes[i]}: could not be read`);
    if (r.value.failed) errors.push(`${indexes[i]}: ${r.value.failed}; the pages before it were searched`);
    for (const service of r.value.services) {
      if (matches(service, words) && !services.some((s) => s.resource === service.resource)) services.push(service);
    }
  });
  return { services: services.slice(0, limits.maxItems), errors };
}
