import type { PaymentRequiredV1, PaymentRequirementsV1 } from '@x402/core/types/v1';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import type { Config } from '../../config/config.js';
import { x402VersionOf, type PriceColumn, type PriceTable } from '../../tool/price.js';
import type { AnyPaidToolDefinition, AnyToolDefinition } from '../../tool/tool.js';
import { inputJsonSchema, outputJsonSchema } from '../../tool/tool-schema.js';
import { bazaarDeclaration, builderCodeDeclaration, paymentIdentifierDeclaration } from './declarations.js';
import { fixedNetworks } from '../../shared/network-sets.js';
import type { NetworkEntry } from '../../shared/networks.js';
import { BATCH_SCHEME, type BatchOffer } from '../batch/kinds.js';

/** Payment validity window for every v2 entry (docs/spec-notes.md#limits). */
export const MAX_TIMEOUT_SECONDS = 300;
/** Payment validity window of the version-1 entry (`base-v1` tools). */
export const V1_MAX_TIMEOUT_SECONDS = 60;
/** `error` of a challenge sent because no payment came with the call. */
export const PAYMENT_REQUIRED_ERROR = 'Payment required';

/** A challenge in either protocol version. */
export type Challenge = PaymentRequired | PaymentRequiredV1;

function priceFor(price: PriceTable, column: PriceColumn): string {
  return price[column] ?? price.default;
}

/** The full URL of a tool's HTTP route, under its group's base URL. */
export function resourceUrl(config: Config, tool: AnyToolDefinition): string {
  return new URL(tool.path, config.baseUrls[tool.group]).href;
}

/**
 * What start-up learned from the facilitators' `/supported` about a configuration's challenges: the options none can
 * settle (left out) and the fee payers they list (published where the operator configured none). A value built once
 * at start-up (`settleableOnly`, facilitator-support.ts) and passed to the broker, discovery and readiness.
 */
export interface ChallengeBook {
  /** Options (`network|scheme`; version 1 under its short name) left out of every challenge. */
  readonly withheld: ReadonlySet<string>;
  /** Fee payer per network id, published in the challenges' `extra.feePayer`. */
  readonly feePayers: ReadonlyMap<string, string>;
  /** The `batch-settlement` entries start-up built (BATCH_SETTLEMENT=on and a facilitator listing the scheme). */
  readonly batch?: BatchOffer;
}

/** The book of a configuration whose facilitators were not asked (`tollbooth tools`, remote mode): nothing withheld. */
export const UNASKED: ChallengeBook = { withheld: new Set(), feePayers: new Map() };

function entryFor(
  config: Config,
  net: NetworkEntry,
  scheme: 'exact' | 'upto',
  amount: string,
  book: ChallengeBook,
): PaymentRequirements {
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
      extra.feePayer = book.feePayers.get(net.id) ?? config.signers.svm;
      break;
    case 'stellar':
      extra.areFeesSponsored = true;
      break;
    case 'algorand':
      extra.feePayer = book.feePayers.get(net.id) ?? config.signers.algorand;
      extra.tag = 'tollbooth';
      break;
  }
  const network = net.id as PaymentRequirements['network'];
  return { scheme, network, asset: net.asset, amount, payTo, maxTimeoutSeconds: MAX_TIMEOUT_SECONDS, extra };
}

/** The `batch-settlement` entries of the given networks at their price columns (none unless start-up built them). */
function batchAccepts(nets: readonly NetworkEntry[], price: PriceTable, book: ChallengeBook): PaymentRequirements[] {
  const offer = book.batch;
  if (!offer) return [];
  const entry = (n: NetworkEntry) => offer.entry(n.id, priceFor(price, n.priceColumn));
  return nets.map(entry).filter((e): e is PaymentRequirements => e !== undefined);
}

/**
 * The `every-network` options: every entry of the network table, EVM `exact`, then EVM `upto`, then EVM
 * `batch-settlement` where start-up built it, then the others.
 */
function everyNetworkAccepts(config: Config, price: PriceTable, book: ChallengeBook): PaymentRequirements[] {
  const evm = config.networks.filter((n) => n.family === 'evm');
  const other = config.networks.filter((n) => n.family !== 'evm');
  const exact = (n: NetworkEntry) => n.schemes.includes('exact');
  return [
    ...evm.filter(exact).map((n) => entryFor(config, n, 'exact', priceFor(price, n.priceColumn), book)),
    ...evm
      .filter((n) => n.schemes.includes('upto'))
      .map((n) => entryFor(config, n, 'upto', priceFor(price, n.priceColumn), book)),
    ...batchAccepts(evm, price, book),
    ...other.filter(exact).map((n) => entryFor(config, n, 'exact', priceFor(price, n.priceColumn), book)),
  ];
}

/** Base (and Solana) of this configuration's table and set, for the fixed-option policies (config checked them at load). */
function fixed(config: Config) {
  return fixedNetworks(config.networks, config.networkSet);
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
  for (const [key, value] of Object.entries(node))
    if (!(key === 'additionalProperties' && value === false)) out[key] = discoverySchema(value);
  return out;
}

function bazaar(tool: AnyPaidToolDefinition) {
  const inputSchema = discoverySchema(inputJsonSchema(tool)) as Record<string, unknown>;
  return bazaarDeclaration(tool.method, (tool.example ?? {}) as Record<string, unknown>, inputSchema);
}

function extensionsFor(config: Config, tool: AnyPaidToolDefinition): Record<string, unknown> {
  if (tool.pricing.accepts !== 'every-network') return { bazaar: bazaar(tool) };
  return {
    'payment-identifier': paymentIdentifierDeclaration(false),
    'builder-code': builderCodeDeclaration(config.builderCode),
    bazaar: bazaar(tool),
  };
}

/** The one `base-short-name` entry: v2, on Base under its version-1 short name, with the version-1 fields too. */
function shortNameEntry(config: Config, tool: AnyPaidToolDefinition, url: string) {
  const { base, baseV1Name } = fixed(config);
  const input = inputJsonSchema(tool);
  return {
    scheme: 'exact',
    network: baseV1Name,
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

function v1Challenge(config: Config, tool: AnyPaidToolDefinition, error: string): PaymentRequiredV1 {
  const { base, baseV1Name } = fixed(config);
  const entry: PaymentRequirementsV1 = {
    scheme: 'exact',
    network: baseV1Name as PaymentRequirementsV1['network'],
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

/** A payment option as a facilitator's `/supported` lists it (version 1 under its short network name). */
export interface PaymentOption {
  /** `network|scheme`, the form {@link withholdOptions} and the facilitator's `supports` take. */
  key: string;
  x402Version: 1 | 2;
  scheme: string;
  network: string;
  /** The CAIP-2 network of the entry (the table entry it comes from). */
  networkId: string;
}

/** The entries a facilitator can settle; a v2 entry under a short name (smm-order's) counts as its CAIP-2 network. */
function offered<T extends { network: string; scheme: string }>(
  config: Config,
  version: 1 | 2,
  entries: T[],
  book: ChallengeBook,
): T[] {
  const out = book.withheld;
  if (out.size === 0) return entries;
  const key = (e: T) => `${version === 2 && !e.network.includes(':') ? fixed(config).base.id : e.network}|${e.scheme}`;
  return entries.filter((e) => !out.has(key(e)));
}

/** Every option the challenges of this configuration advertise (before any is withheld): what its facilitators must settle. */
export function advertisedOptions(config: Config): PaymentOption[] {
  const { base, baseV1Name, solana } = fixed(config);
  const v2 = [
    ...everyNetworkAccepts(config, { default: '0' }, UNASKED),
    ...[base, ...(solana ? [solana] : [])].map((n) => ({ network: n.id, scheme: 'exact' })),
    // BATCH_SETTLEMENT=on: Base's entry must be settleable (the other EVM networks offer it only where it is listed).
    ...(config.batch?.enabled ? [{ network: base.id, scheme: BATCH_SCHEME }] : []),
  ];
  const options = new Map<string, PaymentOption>();
  for (const { network, scheme } of v2)
    options.set(`${network}|${scheme}`, {
      key: `${network}|${scheme}`,
      x402Version: 2,
      scheme,
      network,
      networkId: network,
    });
  options.set(`${baseV1Name}|exact`, {
    key: `${baseV1Name}|exact`,
    x402Version: 1,
    scheme: 'exact',
    network: baseV1Name,
    networkId: base.id,
  });
  return [...options.values()];
}

/**
 * The `accepts` list of a tool, derived from its policy, its price table and the network table, without the options
 * `book` withholds (start-up's findings; none when the facilitators were not asked).
 */
export function acceptsFor(config: Config, tool: AnyPaidToolDefinition, book = UNASKED): PaymentRequirements[] {
  return offered(config, x402VersionOf(tool), allAcceptsFor(config, tool, book), book);
}

function allAcceptsFor(config: Config, tool: AnyPaidToolDefinition, book: ChallengeBook): PaymentRequirements[] {
  switch (tool.pricing.accepts) {
    case 'every-network':
      return everyNetworkAccepts(config, tool.price, book);
    case 'base-and-solana': {
      // Base and Solana of the network set (Base Sepolia and Solana devnet on the testnet set).
      const { base, solana } = fixed(config);
      const exact = [base, ...(solana ? [solana] : [])].map((n) =>
        entryFor(config, n, 'exact', tool.price.default, book),
      );
      return [...exact, ...batchAccepts([base], { default: tool.price.default }, book)];
    }
    case 'base-short-name': {
      // SMM_ORDER_CANONICAL_V2=on: the same payment on Base as a canonical v2 entry, which stock v2 clients select.
      const { base } = fixed(config);
      const seed = config.smmOrderCanonicalV2
        ? entryFor(config, base, 'exact', tool.price.default, book)
        : shortNameEntry(config, tool, resourceUrl(config, tool));
      // BATCH_SETTLEMENT=on: batch-settlement is v2 on CAIP-2 networks only, so after the seed-form entry (unchanged)
      // comes the canonical `eip155:8453` batch entry; a `base-v1` tool offers it on its v2 face (below).
      return [seed, ...batchAccepts([base], { default: tool.price.default }, book)];
    }
    case 'base-v1':
      return v1Challenge(config, tool, PAYMENT_REQUIRED_ERROR).accepts as unknown as PaymentRequirements[];
    case 'base-v1-batch': {
      // A `base-v1` tool's v2 face (BATCH_SETTLEMENT=on): the same payment on Base as a canonical v2 `exact` entry
      // (which the stock v2 client selects, as it reads the v2 header first), then the Base batch entry.
      const { base } = fixed(config);
      const batch = batchAccepts([base], { default: tool.price.default }, book);
      return batch.length === 0 ? [] : [entryFor(config, base, 'exact', tool.price.default, book), ...batch];
    }
  }
}

/** Builds a tool's challenge (v2, or v1 for a `base-v1` tool) with the given error text, under start-up's `book`. */
export function buildChallenge(
  config: Config,
  tool: AnyPaidToolDefinition,
  error = PAYMENT_REQUIRED_ERROR,
  book = UNASKED,
): Challenge {
  if (x402VersionOf(tool) === 1) {
    const v1 = v1Challenge(config, tool, error === PAYMENT_REQUIRED_ERROR ? 'X-PAYMENT header is required' : error);
    return { ...v1, accepts: offered(config, 1, v1.accepts, book) };
  }
  return {
    x402Version: 2,
    error,
    resource: { url: resourceUrl(config, tool), description: tool.description, mimeType: 'application/json' },
    accepts: acceptsFor(config, tool, book),
    extensions: extensionsFor(config, tool),
  };
}
