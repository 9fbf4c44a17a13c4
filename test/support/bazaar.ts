/**
 * A look-alike of the x402 Bazaar discovery API on 127.0.0.1: `GET /discovery/resources?type=http&limit=&offset=`
 * answers `{ x402Version, items, pagination }`. Each listed seller's item is built from its real 402 challenge
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

/** Starts the discovery API listing `items`, on a free port. */
export async function startBazaar(items: readonly unknown[]): Promise<Bazaar> {
  let lists = 0;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== '/discovery/resources') {
      res.writeHead(404).end();
      return;
    }
    lists++;
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 100) || 100, 1000);
    const offset = Number(url.searchParams.get('offset') ?? 0) || 0;
    const page = url.searchParams.get('type') === 'http' ? items.slice(offset, offset + limit) : [];
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ x402Version: 2, items: page, pagination: { limit, offset, total: items.length } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    lists: () => lists,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
