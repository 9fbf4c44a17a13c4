import { mcpBazaarDeclaration } from '../payments/challenges/declarations.js';
import { MPP_INTENT, MPP_METHOD } from '../payments/mpp/challenge.js';
import { MPP_WHERE } from '../payments/mpp/discovery.js';
import { inputJsonSchema } from '../tool/tool-schema.js';
import { usdString, type DiscoveryCatalog, type PaidEntry } from './catalog.js';

type Json = Record<string, unknown>;

/**
 * What the HTTP and the MCP item of one paid tool have in common, with the challenge that transport answers (a
 * `base-v1` tool's MCP calls answer with its x402 v2 face when it has one).
 */
function itemBase(entry: PaidEntry, lastUpdated: number, challenge = entry.challenge): Json {
  const { tool } = entry;
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
    ...(entry.mpp ? { mpp: { offers: entry.mpp.offers } } : {}),
  };
}

/**
 * One paid resource, in the item shape of the x402 bazaar's discovery list (`resource`, `type`, `x402Version`,
 * `accepts`, `lastUpdated`, `description`, `mimeType`, `serviceName`, `tags`, `extensions`), plus `name`, `method`
 * and `price` for readers that do not parse `accepts`.
 */
function httpItem(entry: PaidEntry, lastUpdated: number): Json {
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
function mcpItem(entry: PaidEntry, mcpUrl: string, lastUpdated: number): Json {
  const { tool } = entry;
  const bazaar = mcpBazaarDeclaration(
    tool.name,
    tool.description,
    inputJsonSchema(tool),
    tool.example as Json | undefined,
  );
  return { resource: mcpUrl, type: 'mcp', ...itemBase(entry, lastUpdated, entry.faceChallenge), extensions: bazaar };
}

/** The `mpp` note of the document: how the same resources are paid with MPP (present only when MPP is offered). */
function mppNote(catalog: DiscoveryCatalog): Json | undefined {
  if (!catalog.mpp) return undefined;
  return {
    realm: catalog.mpp.realm,
    method: MPP_METHOD,
    intent: MPP_INTENT,
    ...MPP_WHERE,
    offers:
      'Each item lists its MPP offers under `mpp.offers` (amount in atomic units, currency = token contract, recipient, chain); the OpenAPI document has them under `x-payment-info.mpp.offers`. Items without them are x402 only.',
  };
}

/**
 * `/.well-known/x402`: x402scan's fan-out document (`version: 1`, `resources`: the paid HTTP URLs, `instructions`)
 * extended with `items` in the bazaar's discovery-list shape, one `http` and one `mcp` item per paid tool, and, when MPP
 * is offered, an `mpp` note plus each item's MPP offers. `lastUpdated` is in Unix seconds, as the x402 v2 discovery
 * fields and the well-known discovery draft have it.
 */
export function wellKnownDocument(catalog: DiscoveryCatalog, lastUpdated = Math.floor(Date.now() / 1000)): Json {
  const mpp = mppNote(catalog);
  return {
    version: 1,
    x402Version: 2,
    resources: catalog.paid.map((e) => e.url),
    instructions:
      'Each resource answers an unpaid request with 402 and its payment requirements. Pay one entry of `accepts` with an x402 client and repeat the request with the payment in PAYMENT-SIGNATURE (X-PAYMENT for x402Version 1). The same tools are MCP tools at the `mcp` URL (payment in params._meta["x402/payment"]).' +
      (mpp
        ? ' MPP clients may pay instead: see `mpp` (challenge in WWW-Authenticate: Payment, credential in Authorization: Payment; over MCP in _meta["org.paymentauth/credential"]).'
        : ''),
    openapi: catalog.urls.openapi,
    llms: catalog.urls.llms,
    mcp: catalog.urls.mcp,
    ...(mpp ? { mpp } : {}),
    items: [
      ...catalog.paid.map((e) => httpItem(e, lastUpdated)),
      ...catalog.paid.map((e) => mcpItem(e, catalog.urls.mcp, lastUpdated)),
    ],
  };
}
