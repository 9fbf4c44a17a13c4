import { mcpBazaarDeclaration } from '../payments/declarations.js';
import { inputJsonSchema } from '../payments/requirements.js';
import { usdString, type DiscoveryCatalog, type PaidEntry } from './catalog.js';

type Json = Record<string, unknown>;

/** What the HTTP and the MCP item of one paid tool have in common. */
function itemBase(entry: PaidEntry, lastUpdated: string): Json {
  const { challenge, tool } = entry;
  return {
    name: tool.name,
    x402Version: challenge.x402Version,
    accepts: challenge.accepts,
    lastUpdated,
    description: tool.description,
    mimeType: 'application/json',
    serviceName: 'Tollbooth',
    tags: [tool.group],
    price: { usd: usdString(entry.price.usd), currency: 'USD' },
  };
}

/**
 * One paid resource, in the item shape of the x402 bazaar's discovery list (`resource`, `type`, `x402Version`,
 * `accepts`, `lastUpdated`, `description`, `mimeType`, `serviceName`, `tags`, `extensions`), plus `name`, `method`
 * and `price` for readers that do not parse `accepts`.
 */
function httpItem(entry: PaidEntry, lastUpdated: string): Json {
  const { challenge, tool } = entry;
  return {
    resource: entry.url,
    type: 'http',
    method: tool.method,
    ...itemBase(entry, lastUpdated),
    ...('extensions' in challenge && challenge.extensions ? { extensions: challenge.extensions } : {}),
  };
}

/** The same tool as an MCP resource: the server's /mcp URL and the tool name (the bazaar's MCP discovery form). */
function mcpItem(entry: PaidEntry, mcpUrl: string, lastUpdated: string): Json {
  const { tool } = entry;
  const bazaar = mcpBazaarDeclaration(tool.name, tool.description, inputJsonSchema(tool), tool.example as Json | undefined);
  return { resource: mcpUrl, type: 'mcp', ...itemBase(entry, lastUpdated), extensions: bazaar };
}

/**
 * `/.well-known/x402`: x402scan's fan-out document (`version: 1`, `resources`: the paid HTTP URLs, `instructions`)
 * extended with `items` in the bazaar's discovery-list shape, one `http` and one `mcp` item per paid tool.
 */
export function wellKnownDocument(catalog: DiscoveryCatalog, lastUpdated = new Date().toISOString()): Json {
  return {
    version: 1,
    x402Version: 2,
    resources: catalog.paid.map((e) => e.url),
    instructions:
      'Each resource answers an unpaid request with 402 and its payment requirements. Pay one entry of `accepts` with an x402 client and repeat the request with the payment in PAYMENT-SIGNATURE (X-PAYMENT for x402Version 1). The same tools are MCP tools at the `mcp` URL (payment in params._meta["x402/payment"]).',
    openapi: catalog.urls.openapi,
    llms: catalog.urls.llms,
    mcp: catalog.urls.mcp,
    items: [...catalog.paid.map((e) => httpItem(e, lastUpdated)), ...catalog.paid.map((e) => mcpItem(e, catalog.urls.mcp, lastUpdated))],
  };
}
