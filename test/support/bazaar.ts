/**
 * A look-alike of the x402 Bazaar discovery API on 127.0.0.1: `GET /discovery/resources?type=http&limit=&offset=`
 * answers `{ x402Version, items, pagination: { limit, offset, total } }`, page by page. Each listed seller's item is built from its real 402 challenge
 * (the `PAYMENT-REQUIRED` header of an unpaid request), as the Bazaar catalogs what sellers advertise.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running discovery API. */
export interface Bazaar {
  url: string;
  /** Requests its list endpoint answered. */
  lists: () => number;
  close(): Promise<void>;
}

/** The discovery item of one paid URL, read from its unpaid 402 answer. */
export async function itemOf(resource: string, metadata: Record<string, unknown> = {}): Promise<unknown> {
  const res = await fetch(resource);
  const header = res.headers.get('payment-required');
  if (res.status !== 402 || !header) throw new Error(`${resource} did not answer a version 2 challenge`);
  const challenge = JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as {
    x402Version: number;
    accepts: unknown[];
    resource?: { description?: string };
  };
  return {
    resource,
    type: 'http',
    x402Version: challenge.x402Version,
    accepts: challenge.accepts,
    lastUpdated: new Date(0).toISOString(),
    metadata: { description: challenge.resource?.description, ...metadata },
  };
}

/** How the look-alike pages its list. */
export interface BazaarPaging {
  /** Largest page it answers, whatever `limit` asks (as a real index caps it); default 1000. */
  maxLimit?: number;
  /** A never-ending index: past `items`, every page is full of generated fillers and `total` never comes. */
  endless?: boolean;
}

/** A filler item at position `i` of an endless index. */
const filler = (i: number) => ({
  resource: `https://filler.example/item/${i}`,
  type: 'http',
  x402Version: 2,
  accepts: [],
  lastUpdated: new Date(0).toISOString(),
  metadata: { description: `Filler ${i}` },
});

/** The page at `offset` of at most `limit` items. */
function pageOf(items: readonly unknown[], offset: number, limit: number, endless: boolean): unknown[] {
  if (!endless) return items.slice(offset, offset + limit);
  return Array.from({ length: limit }, (_, k) => items[offset + k] ?? filler(offset + k));
}

/** Starts the discovery API listing `items`, on a free port; it honours `limit` (up to `maxLimit`) and `offset`. */
export async function startBazaar(items: readonly unknown[], paging: BazaarPaging = {}): Promise<Bazaar> {
  let lists = 0;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== '/discovery/resources') {
      res.writeHead(404).end();
      return;
    }
    lists++;
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 100) || 100, paging.maxLimit ?? 1000);
    const offset = Math.max(Number(url.searchParams.get('offset') ?? 0) || 0, 0);
    const endless = paging.endless === true;
    const page = url.searchParams.get('type') === 'http' ? pageOf(items, offset, limit, endless) : [];
    const total = endless ? offset + 2 * limit : items.length;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ x402Version: 2, items: page, pagination: { limit, offset, total } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    lists: () => lists,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
