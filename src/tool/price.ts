/**
 * What a paid tool accepts and what it costs, declared once on the tool (`pricing: { usd, accepts }`), and the
 * pricing rules that derive everything else from it: the amount of each price column in the asset's smallest units,
 * and the price sentence every description ends with. Neutral: tool files, the payment side, the transports and the
 * agent read it; it imports nothing of theirs.
 */
import { formatUnits } from './units.js';

/** Price per call in the asset's smallest units, by price-table column (derived from the dollar price). */
export interface PriceTable {
  /** The default column: every network whose entry names no other column (6-decimal USDC and USDG). */
  default: string;
  /** The `eip155:10` (Optimism) column: the dollar price plus the Optimism surcharge; `every-network` tools only. */
  optimism?: string;
  /** The `stellar:pubnet` column, in the 7-decimal units of Stellar's USDC; `every-network` tools only. */
  stellar?: string;
}

/** A column of the price table; each network entry of the configuration names the column its amount comes from. */
export type PriceColumn = keyof PriceTable;

/** The pricing rule of each column: the decimals of the asset it is paid in, and a surcharge in dollars. */
export const PRICE_COLUMNS: Readonly<Record<PriceColumn, { decimals: number; surchargeUsd: string }>> = {
  default: { decimals: 6, surchargeUsd: '0' },
  optimism: { decimals: 6, surchargeUsd: '0.001' },
  stellar: { decimals: 7, surchargeUsd: '0' },
};

interface AcceptsRule {
  /** The x402 protocol version of the tool's challenge and payments. */
  x402Version: 1 | 2;
  /** The price columns the tool's options are priced from. */
  columns: readonly PriceColumn[];
}

/**
 * The payment options a tool can accept, by name (the challenge builder in src/payments/challenges/requirements.ts turns each into
 * its `accepts` entries): `every-network`, x402 v2 on every entry of the network table (`exact`, and `upto` where the
 * entry has it), with the payment-identifier and builder-code extensions; `base-and-solana`, x402 v2 `exact` on Base
 * and Solana of the network set; `base-short-name`, one x402 v2 `exact` entry on Base under its version-1 short name,
 * carrying the version-1 fields too (as the first release advertised it); `base-v1`, x402 version 1 `exact` on Base;
 * `base-v1-batch`, not for definitions: the x402 v2 face the server gives a `base-v1` tool when it offers batch
 * settlement on Base (`exact` and `batch-settlement` on `eip155:8453`; see {@link v2FaceOf}).
 */
export const ACCEPTS = {
  'every-network': { x402Version: 2, columns: ['default', 'optimism', 'stellar'] },
  'base-and-solana': { x402Version: 2, columns: ['default'] },
  'base-short-name': { x402Version: 2, columns: ['default'] },
  'base-v1': { x402Version: 1, columns: ['default'] },
  'base-v1-batch': { x402Version: 2, columns: ['default'] },
} as const satisfies Record<string, AcceptsRule>;

/** The name of a set of payment options a tool accepts (see {@link ACCEPTS}). */
export type Accepts = keyof typeof ACCEPTS;

/** A paid tool's payment policy: the price per call in US dollars, and the payment options it accepts. */
export interface PaymentPolicy {
  /** Price per call in US dollars, as a decimal string (`'0.001'`, `'3.00'`); shown as written. */
  usd: string;
  accepts: Accepts;
}

const DOLLARS = /^\d+(?:\.\d+)?$/;

/** A dollar amount in units of an asset with `decimals` decimals; throws when it is not a whole number of units. */
function toUnits(usd: string, decimals: number): bigint {
  if (!DOLLARS.test(usd)) throw new Error(`price "${usd}" is not a dollar amount such as 0.001`);
  const [whole, fraction = ''] = usd.split('.');
  if (fraction.replace(/0+$/, '').length > decimals)
    throw new Error(`price $${usd} is not a whole number of units at ${decimals} decimals`);
  return BigInt(whole! + fraction.padEnd(decimals, '0').slice(0, decimals));
}

/** The amount of one column in the asset's smallest units: the dollar price plus the column's surcharge. */
function columnUnits(usd: string, column: PriceColumn): bigint {
  const { decimals, surchargeUsd } = PRICE_COLUMNS[column];
  return toUnits(usd, decimals) + toUnits(surchargeUsd, decimals);
}

/** The price table of a policy: each of its columns derived from the dollar price by the pricing rules. */
export function priceTable(policy: PaymentPolicy): PriceTable {
  const table: PriceTable = { default: columnUnits(policy.usd, 'default').toString() };
  for (const column of ACCEPTS[policy.accepts].columns) table[column] = columnUnits(policy.usd, column).toString();
  return table;
}

/**
 * The x402 v2 face of a `base-v1` tool: the same tool (name, description, price, handler) under the `base-v1-batch`
 * policy, for the calls that pay it with version 2 when batch settlement is on (one object per tool); undefined for
 * any other tool.
 */
export function v2FaceOf<T extends { pricing: PaymentPolicy }>(tool: T): T | undefined {
  if (tool.pricing.accepts !== 'base-v1') return undefined;
  let face = faces.get(tool) as T | undefined;
  if (!face) faces.set(tool, (face = { ...tool, pricing: { ...tool.pricing, accepts: 'base-v1-batch' } }));
  return face;
}
const faces = new WeakMap<object, object>();

/** The x402 protocol version a tool speaks: the version of the options its policy accepts. */
export function x402VersionOf(tool: { pricing: PaymentPolicy }): 1 | 2 {
  return ACCEPTS[tool.pricing.accepts].x402Version;
}

/** The sentence that states a tool's price (or that it is free), generated from its policy: the only place it is written. */
export function priceSentence(policy: PaymentPolicy | undefined): string {
  if (!policy) return 'Free (no payment).';
  const table = priceTable(policy);
  const costs = `Costs $${policy.usd} per call`;
  switch (policy.accepts) {
    case 'every-network': {
      const optimism = BigInt(table.optimism!);
      const at = `$${formatUnits(optimism, PRICE_COLUMNS.optimism.decimals)}, ${optimism} units, on Optimism`;
      return `${costs} (${table.default} USDC units; ${at}; ${table.stellar} units on Stellar, whose USDC has 7 decimals).`;
    }
    case 'base-and-solana':
      return `${costs} (${table.default} USDC units), payable on Base or Solana only.`;
    case 'base-short-name':
      return `${costs} (${table.default} USDC units), payable on Base only.`;
    case 'base-v1':
    case 'base-v1-batch':
      return `${costs} (${table.default} USDC units), payable on Base only, with x402 version 1.`;
  }
}

/** A tool's full description, as every catalog, challenge and document serves it: what it does, then its price sentence. */
export function describeTool(description: string, policy: PaymentPolicy | undefined): string {
  return `${description.trimEnd()} ${priceSentence(policy)}`;
}
