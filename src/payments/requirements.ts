import type { PaymentRequiredV1, PaymentRequirementsV1 } from '@x402/core/types/v1';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { z } from 'zod';
import type { Config } from '../config.js';
import type { AnyToolDefinition, PriceTable } from '../tool.js';
import { bazaarDeclaration, builderCodeDeclaration, paymentIdentifierDeclaration } from './declarations.js';
import { BASE_MAINNET, SOLANA_MAINNET, type NetworkEntry, type PriceColumn } from './networks.js';

/** Payment validity window for every v2 entry (spec §8). */
export const MAX_TIMEOUT_SECONDS = 300;
/** Payment validity window of the version-1 transfers entry. */
export const V1_MAX_TIMEOUT_SECONDS = 60;
/** `error` of a challenge sent because no payment came with the call. */
export const PAYMENT_REQUIRED_ERROR = 'Payment required';

/** A challenge in either protocol version. */
export type Challenge = PaymentRequired | PaymentRequiredV1;

function priceFor(price: PriceTable, column: PriceColumn): string {
  if (column === 'optimism') return price.optimism ?? price.default;
  if (column === 'stellar') return price.stellar ?? price.default;
  return price.default;
}

/** The full URL of a tool's HTTP route, under its group's base URL. */
export function resourceUrl(config: Config, tool: AnyToolDefinition): string {
  return new URL(tool.path, config.baseUrls[tool.group]).href;
}

function entryFor(config: Config, net: NetworkEntry, scheme: 'exact' | 'upto', amount: string): PaymentRequirements {
  const payTo = config.payTo[net.family];
  const extra: Record<string, unknown> = {};
  switch (net.family) {
    case 'evm':
      extra.name = net.name;
      extra.version = net.version;
      if (scheme === 'upto') {
        extra.facilitatorAddress = config.signers.evm;
        extra.assetTransferMethod = 'permit2';
      }
      break;
    case 'svm':
      extra.feePayer = config.signers.svm;
      break;
    case 'stellar':
      extra.areFeesSponsored = true;
      break;
    case 'algorand':
      extra.feePayer = config.signers.algorand;
      extra.tag = 'tollbooth';
      break;
  }
  const network = net.id as PaymentRequirements['network'];
  return { scheme, network, asset: net.asset, amount, payTo, maxTimeoutSeconds: MAX_TIMEOUT_SECONDS, extra };
}

function toolsGroupAccepts(config: Config, price: PriceTable): PaymentRequirements[] {
  const evm = config.networks.filter((n) => n.family === 'evm');
  const other = config.networks.filter((n) => n.family !== 'evm');
  const exact = (n: NetworkEntry) => n.schemes.includes('exact');
  return [
    ...evm.filter(exact).map((n) => entryFor(config, n, 'exact', priceFor(price, n.priceColumn))),
    ...evm.filter((n) => n.schemes.includes('upto')).map((n) => entryFor(config, n, 'upto', priceFor(price, n.priceColumn))),
    ...other.filter(exact).map((n) => entryFor(config, n, 'exact', priceFor(price, n.priceColumn))),
  ];
}

function network(config: Config, id: string): NetworkEntry {
  const found = config.networks.find((n) => n.id === id);
  if (!found) throw new Error(`network ${id} is missing from the network table`);
  return found;
}

/** JSON Schema (2020-12) of a tool's input as a caller sends it. */
export function inputJsonSchema(tool: { input: z.ZodType }): Record<string, unknown> {
  return jsonSchemaOf(tool.input, 'input');
}

/** JSON Schema (2020-12) of a tool's output. */
export function outputJsonSchema(tool: { output: z.ZodType }): Record<string, unknown> {
  return jsonSchemaOf(tool.output, 'output');
}

/** JSON Schemas already derived, by zod schema and side: each is derived once (challenges, MCP, discovery share it). */
const derived = { input: new WeakMap<z.ZodType, Record<string, unknown>>(), output: new WeakMap<z.ZodType, Record<string, unknown>>() };

function jsonSchemaOf(type: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  let schema = derived[io].get(type);
  if (!schema) {
    schema = deepFreeze(z.toJSONSchema(type, { io, unrepresentable: 'any' }) as Record<string, unknown>);
    derived[io].set(type, schema);
  }
  return schema;
}

/** Freezes a JSON value at every depth (a shared schema must never be changed by one of its readers). */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * The input schema published in the x402 challenge's bazaar declaration, as the first release published it (without
 * the `additionalProperties: false` of the strict inputs): challenge bytes are a contract with clients and catalogs
 * and do not change. Unknown fields are still refused (400) whatever the declaration says; MCP and OpenAPI say so.
 */
function discoverySchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(discoverySchema);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) if (!(key === 'additionalProperties' && value === false)) out[key] = discoverySchema(value);
  return out;
}

function bazaar(tool: AnyToolDefinition) {
  const inputSchema = discoverySchema(inputJsonSchema(tool)) as Record<string, unknown>;
  return bazaarDeclaration(tool.method, (tool.example ?? {}) as Record<string, unknown>, inputSchema);
}

function extensionsFor(config: Config, tool: AnyToolDefinition): Record<string, unknown> {
  if (tool.group !== 'tools') return { bazaar: bazaar(tool) };
  return {
    'payment-identifier': paymentIdentifierDeclaration(false),
    'builder-code': builderCodeDeclaration(config.builderCode),
    bazaar: bazaar(tool),
  };
}

function smmEntry(config: Config, tool: AnyToolDefinition, url: string) {
  const base = network(config, BASE_MAINNET);
  const input = inputJsonSchema(tool);
  return {
    scheme: 'exact',
    network: 'base',
    asset: base.asset,
    amount: tool.price.default,
    maxAmountRequired: tool.price.default,
    payTo: config.payTo.evm,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    resource: url,
    description: tool.description,
    mimeType: 'application/json',
    outputSchema: {
      input: { type: 'http', method: tool.method, bodyType: 'json', bodyFields: input.properties ?? {} },
      output: outputJsonSchema(tool),
    },
    extra: { name: base.name, version: base.version, label: tool.title },
  } as unknown as PaymentRequirements;
}

function v1Challenge(config: Config, tool: AnyToolDefinition, error: string): PaymentRequiredV1 {
  const base = network(config, BASE_MAINNET);
  const entry: PaymentRequirementsV1 = {
    scheme: 'exact',
    network: 'base' as PaymentRequirementsV1['network'],
    maxAmountRequired: tool.price.default,
    asset: base.asset,
    payTo: config.payTo.evm,
    resource: resourceUrl(config, tool),
    description: tool.description,
    mimeType: '',
    outputSchema: { input: { type: 'http', method: tool.method, discoverable: true } },
    maxTimeoutSeconds: V1_MAX_TIMEOUT_SECONDS,
    extra: { name: base.name, version: base.version },
  };
  return { x402Version: 1, error, accepts: [entry] };
}

/** The `accepts` list of a tool, derived from its group, its price table and the network table. */
export function acceptsFor(config: Config, tool: AnyToolDefinition): PaymentRequirements[] {
  switch (tool.group) {
    case 'tools':
      return toolsGroupAccepts(config, tool.price);
    case 'token':
      return [BASE_MAINNET, SOLANA_MAINNET].map((id) =>
        entryFor(config, network(config, id), 'exact', tool.price.default),
      );
    case 'smm':
      return [smmEntry(config, tool, resourceUrl(config, tool))];
    case 'transfers':
      return v1Challenge(config, tool, PAYMENT_REQUIRED_ERROR).accepts as unknown as PaymentRequirements[];
  }
}

/** Builds a tool's challenge (v2, or v1 for the transfers group) with the given error text. */
export function buildChallenge(config: Config, tool: AnyToolDefinition, error = PAYMENT_REQUIRED_ERROR): Challenge {
  if (tool.group === 'transfers') {
    return v1Challenge(config, tool, error === PAYMENT_REQUIRED_ERROR ? 'X-PAYMENT header is required' : error);
  }
  return {
    x402Version: 2,
    error,
    resource: { url: resourceUrl(config, tool), description: tool.description, mimeType: 'application/json' },
    accepts: acceptsFor(config, tool),
    extensions: extensionsFor(config, tool),
  };
}
