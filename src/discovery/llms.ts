import { firstSentence, usdString, type DiscoveryCatalog, type PaidEntry } from './catalog.js';
import { openApiPath } from './openapi.js';

/** The MPP bullets of "How to pay" (none when MPP is off or no tool has an MPP offer). */
function mppLines(catalog: DiscoveryCatalog): string[] {
  if (!catalog.mpp) return [];
  return [
    `- MPP (Machine Payments Protocol) works too, for the tools priced in an EVM token: the same unpaid answer carries \`WWW-Authenticate: Payment\` challenges (method \`evm\`, intent \`charge\`, realm \`${catalog.mpp.realm}\`); over MCP they are in \`_meta["org.paymentauth/payment-required"]\`. Sign one with an MPP client (an EIP-3009 authorization) and repeat the call with \`Authorization: Payment <credential>\` (MCP: \`params._meta["org.paymentauth/credential"]\`); the receipt comes back in \`Payment-Receipt\` (MCP: \`_meta["org.paymentauth/receipt"]\`).`,
    "- Send one protocol per call, never both. The OpenAPI document lists each operation's MPP offers under `x-payment-info.mpp.offers`; one payment buys one call whichever protocol carries it.",
  ];
}

/** The x402 versions a tool is paid in: its own, and its v2 face's schemes (a `base-v1` tool with batch settlement). */
function versions(entry: PaidEntry): string {
  const own = `x402 v${entry.price.x402Version}`;
  if (!entry.face) return own;
  const schemes = [...new Set(entry.face.options.map((o) => o.scheme))].join(' or ');
  return `${own}; x402 v2 with ${schemes} in PAYMENT-SIGNATURE and over MCP`;
}

/**
 * `/llms.txt` (llmstxt.org): a short catalogue an agent can read in one go — how to pay, the MCP endpoint, then one
 * line per endpoint: `- [name](url): METHOD /path — from $price per call (x402 vN) — Title: first sentence`.
 */
export function llmsText(catalog: DiscoveryCatalog): string {
  const paid = catalog.paid.map(
    (e) =>
      `- [${e.tool.name}](${e.url}): ${e.tool.method} ${e.path} — from $${usdString(e.price.usd)} per call (${versions(e)}) — ${e.tool.title}: ${firstSentence(e.tool.description)}`,
  );
  const free = catalog.free.map((e) => {
    // Path parameters as URI-template braces (`/v1/smm-order/{orderId}`), as in the OpenAPI document.
    const path = openApiPath(e.path).path;
    return `- [${e.tool.name}](${e.origin}${path}): ${e.tool.method} ${path} — free — ${e.tool.title}: ${firstSentence(e.tool.description)}`;
  });
  return [
    '# Tollbooth',
    '',
    '> Utility endpoints for AI agents, sold one call at a time with x402 stablecoin payments (USDC and other stablecoins on several chains). Every endpoint is an HTTP route and an MCP tool.',
    '',
    '## How to pay',
    '',
    '- Call an endpoint without payment: HTTP answers 402 with the payment requirements in the `PAYMENT-REQUIRED` header (base64 JSON) and the body; MCP answers an `isError` result with them in `structuredContent`.',
    '- Sign one entry of `accepts` with an x402 client and repeat the same call with the payment in `PAYMENT-SIGNATURE` (x402 v2) or `X-PAYMENT` (x402 v1); over MCP in `params._meta["x402/payment"]`.',
    '- The receipt comes back in `PAYMENT-RESPONSE` (MCP: `_meta["x402/payment-response"]`). Invalid input is refused before anything is charged, and a call that fails is not charged.',
    '- Too many requests are answered with 429 and `Retry-After` (MCP: `rate_limited`); a payment sent with them stays usable.',
    ...mppLines(catalog),
    '',
    '## Endpoints',
    '',
    `- MCP (streamable HTTP): ${catalog.urls.mcp}`,
    `- OpenAPI 3.1 with prices (\`x-payment-info\`): ${catalog.urls.openapi}`,
    `- x402 resources: ${catalog.urls.wellKnown}`,
    '',
    '## Paid tools',
    '',
    ...paid,
    '',
    '## Free tools',
    '',
    ...free,
    '',
  ].join('\n');
}
