import type { ServerDeps } from '../runtime/server-deps.js';
import { mppToolInfo, type MppToolInfo } from '../payments/mpp/discovery.js';
import { priceSummary, type PriceSummary } from '../payments/challenges/pricing.js';
import { resourceUrl, type Challenge } from '../payments/challenges/requirements.js';
import { isPaid, type AnyPaidToolDefinition, type AnyToolDefinition } from '../tool/tool.js';

/** What every discovery document says about one paid tool, taken from the definition and the broker's own challenge. */
export interface PaidEntry {
  tool: AnyPaidToolDefinition;
  /** The full URL of its HTTP route (the challenge's resource URL). */
  url: string;
  /** The path of that URL (the route, under its group's base URL). */
  path: string;
  /** The origin its group is served from. */
  origin: string;
  /** The challenge an unpaid call receives, exactly as the broker sends it. */
  challenge: Challenge;
  /** Cheapest price in USD and every accepted option (the MCP tools/list `_meta["x402/price"]`). */
  price: PriceSummary;
  /** Its MPP offers, from the MPP gate (absent when MPP is off or the tool has no EVM EIP-3009 option). */
  mpp?: MppToolInfo;
  /** A `base-v1` tool's x402 v2 face (batch settlement on): the options a version 2 payment may pay. */
  face?: PriceSummary;
  /** That face's challenge: what an unpaid MCP call and `PAYMENT-REQUIRED` carry for the tool. */
  faceChallenge?: Challenge;
}

/** What the discovery documents say about one free tool (a tool without a price). */
export interface FreeEntry {
  tool: AnyToolDefinition;
  url: string;
  /** The express path (`/v1/smm-order/:orderId`). */
  path: string;
  origin: string;
}

/** The inputs of every discovery document: the registry as this configuration serves it. */
export interface DiscoveryCatalog {
  paid: PaidEntry[];
  free: FreeEntry[];
  /** Public URLs of the discovery surfaces themselves. */
  urls: { openapi: string; wellKnown: string; llms: string; mcp: string };
  version: string;
  /** Set when MPP is on and at least one paid tool has an MPP offer: the realm of every challenge. */
  mpp?: { realm: string };
}

/** Builds the catalog once from the runtime's dependencies (configuration, registry, broker). */
export function discoveryCatalog(deps: ServerDeps): DiscoveryCatalog {
  const { config } = deps;
  const paid = deps.tools.filter(isPaid).map((tool): PaidEntry => {
    const url = resourceUrl(config, tool);
    const parsed = new URL(url);
    const mpp = mppToolInfo(deps.broker.mpp, tool);
    const face = deps.broker.v2Face(tool);
    return {
      tool,
      url,
      path: parsed.pathname,
      origin: parsed.origin,
      challenge: deps.broker.challenge(tool),
      price: priceSummary(config, tool, deps.broker.book),
      ...(mpp ? { mpp } : {}),
      ...(face
        ? { face: priceSummary(config, face, deps.broker.book), faceChallenge: deps.broker.challenge(face) }
        : {}),
    };
  });
  const realm = paid.find((e) => e.mpp)?.mpp?.realm;
  const free = deps.tools
    .filter((tool) => !isPaid(tool))
    .map((tool): FreeEntry => {
      const url = new URL(tool.path, config.baseUrls[tool.group]);
      return { tool, url: url.href, path: tool.path, origin: url.origin };
    });
  const at = (path: string) => new URL(path, config.baseUrls.tools).href;
  return {
    paid,
    free,
    urls: { openapi: at('/openapi.json'), wellKnown: at('/.well-known/x402'), llms: at('/llms.txt'), mcp: at('/mcp') },
    version: deps.version,
    ...(realm === undefined ? {} : { mpp: { realm } }),
  };
}

/** A USD amount as a plain decimal string (`0.001`, `0.15`, `3`), without floating-point noise. */
export function usdString(usd: number): string {
  return usd.toFixed(6).replace(/0+$/, '').replace(/\.$/, '');
}

const ABBREVIATIONS = /(?:\be\.g|\bi\.e|\betc|\bvs|\bapprox|\b[A-Z])$/;
const MAX_SENTENCE = 160;

function clip(text: string): string {
  if (text.length <= MAX_SENTENCE) return text;
  const cut = text.slice(0, MAX_SENTENCE);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), 1)).replace(/[\s,;:(]+$/, '')}…`;
}

/** The first sentence of a description (abbreviations such as "e.g." do not end it), clipped to 160 characters. */
export function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  for (const match of flat.matchAll(/[.!?](?=\s|$)/g)) {
    if (ABBREVIATIONS.test(flat.slice(0, match.index))) continue;
    return clip(flat.slice(0, match.index + 1));
  }
  return clip(flat);
}
