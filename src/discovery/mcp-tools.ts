/**
 * The MCP server's catalog: each registry tool's tools/list entry, built once by the composition root (the selling
 * runtime, or the agent's remote stdio) and handed to the MCP server, which lists what it is given.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Config } from '../config/config.js';
import { MPP_OFFERS_META_KEY, mppToolInfo } from '../payments/mpp/discovery.js';
import type { MppGate } from '../payments/mpp/gate.js';
import { priceSummary } from '../payments/challenges/pricing.js';
import type { ChallengeBook } from '../payments/challenges/requirements.js';
import { inputJsonSchema, outputJsonSchema } from '../tool/tool-schema.js';
import { isPaid, type AnyPaidToolDefinition, type AnyToolDefinition } from '../tool/tool.js';
import { portableSchema } from '../shared/mcp-wire.js';

/** `_meta` key under which tools/list publishes each tool's price. */
export const PRICE_META_KEY = 'x402/price';

/**
 * JSON Schema of what a paid tool's structuredContent can be: its output, or the x402
 * PaymentRequired object that the x402 MCP transport puts there when a payment is missing or refused.
 */
const PAYMENT_REQUIRED_JSON_SCHEMA = {
  type: 'object',
  description: 'x402 PaymentRequired: returned with isError when the call was not paid for.',
  properties: {
    x402Version: { type: 'integer' },
    error: { type: 'string' },
    accepts: { type: 'array', items: { type: 'object' } },
  },
  required: ['x402Version', 'accepts'],
};

/**
 * The MCP tools/list entry of a tool, derived only from its definition and the configuration. A paid tool's entry also
 * carries its price (`_meta["x402/price"]`), the PaymentRequired branch of its output schema and, with the MPP gate,
 * its MPP offers (`_meta["org.paymentauth/offers"]`, when MPP is on and the tool has any); a free tool's has neither.
 */
function toMcpTool(
  config: Config,
  tool: AnyToolDefinition,
  mpp?: MppGate,
  book?: ChallengeBook,
  faceOf?: FaceOf,
): Tool {
  const output = portableSchema(outputJsonSchema(tool));
  const entry: Tool = {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: portableSchema(inputJsonSchema(tool)) as Tool['inputSchema'],
    outputSchema: output as Tool['outputSchema'],
    annotations: { title: tool.title, ...tool.annotations },
  };
  if (!isPaid(tool)) return entry;
  const offers = mppToolInfo(mpp, tool);
  return {
    ...entry,
    outputSchema: { type: 'object', anyOf: [output, PAYMENT_REQUIRED_JSON_SCHEMA] } as Tool['outputSchema'],
    _meta: {
      // What an unpaid MCP call answers: a `base-v1` tool's x402 v2 face when it has one, else the tool as listed.
      [PRICE_META_KEY]: priceSummary(config, faceOf?.(tool) ?? tool, book),
      ...(offers ? { [MPP_OFFERS_META_KEY]: offers } : {}),
    },
  };
}

/** A selling server's x402 v2 face of a tool (the broker's `v2Face`), if it has one. */
export type FaceOf = (tool: AnyPaidToolDefinition) => AnyPaidToolDefinition | undefined;

/** What an MCP server lists: the registry's tools and their tools/list entries, in the same order. */
export interface McpToolCatalog {
  tools: readonly AnyToolDefinition[];
  entries: readonly Tool[];
}

/**
 * The catalog of a registry: prices from the configuration (under a selling server's start-up `book`) and, with the
 * MPP gate of a selling server, MPP offers; with `faceOf`, a `base-v1` tool is priced as its x402 v2 face, which its
 * unpaid MCP calls answer with.
 */
export function mcpCatalog(
  config: Config,
  tools: readonly AnyToolDefinition[],
  mpp?: MppGate,
  book?: ChallengeBook,
  faceOf?: FaceOf,
): McpToolCatalog {
  return { tools, entries: tools.map((tool) => toMcpTool(config, tool, mpp, book, faceOf)) };
}
