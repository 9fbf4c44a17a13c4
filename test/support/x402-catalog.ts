/**
 * A catalog published only as `/.well-known/x402` (the bazaar's discovery-list item shape), served on 127.0.0.1 by a
 * bare node:http server in front of sellers it did not write: every other path answers 404, so the agent finds no MCP
 * endpoint there. The document can be swapped while the server runs.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One HTTP resource of the catalog. */
export interface CatalogItem {
  resource: string;
  /** The method the item names (any text: a reader keeps the methods it knows). */
  method?: string;
  name?: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  price?: { usd: string; currency: 'USD' };
}

/** A running catalog. */
export interface X402Catalog {
  url: string;
  /** Requests for the document so far. */
  reads: () => number;
  /** Replaces the document served (any JSON, a raw string, or a function writing the whole answer itself). */
  publish(document: unknown): void;
  close(): Promise<void>;
}

/** The `/.well-known/x402` document of `items`: x402scan's `version`/`resources`, and `items` with `type: 'http'`. */
export function x402Document(items: readonly CatalogItem[]): Record<string, unknown> {
  return {
    version: 1,
    x402Version: 2,
    resources: items.map((i) => i.resource),
    items: items.map((i) => ({ type: 'http', x402Version: 2, ...i })),
  };
}

/** Starts the catalog on a free port of 127.0.0.1, serving `document` at `path` (another document: an OpenAPI one). */
export async function startX402Catalog(document: unknown, path = '/.well-known/x402'): Promise<X402Catalog> {
  let current = document;
  let reads = 0;
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === path) {
      reads++;
      if (typeof current === 'function') return void (current as (res: ServerResponse) => void)(res);
      const body = typeof current === 'string' ? current : JSON.stringify(current);
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      return;
    }
    req.resume();
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    reads: () => reads,
    publish: (next) => {
      current = next;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
