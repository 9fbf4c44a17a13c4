/**
 * Chooses which of a challenge's `accepts` to pay: the cheapest in US dollars among the options the agent may and
 * can pay (allowed network, a wallet and a scheme for it, an asset it can value), ties broken by the user's
 * preference order, then `exact` before other schemes, then the server's order.
 */
import type { PaymentRequirements } from '@x402/core/types';
import type { NetworkEntry, NetworkFamily } from '../payments/networks.js';
import { canonicalNetwork, familyOf, matchesAny, patternIndex, tableEntry } from './networks.js';
import type { Wallets } from './wallets.js';

/** Why an option was left out. */
export type OptionRejection = 'unsupported_family' | 'unsupported_scheme' | 'no_wallet' | 'network_not_allowed' | 'unknown_asset' | 'over_per_call_cap';

/** One advertised option, valued in US dollars, with why it cannot be paid (if it cannot). */
export interface PricedOption {
  /** The entry exactly as advertised (it is echoed unchanged). */
  option: PaymentRequirements;
  /** CAIP-2 id (`base` → `eip155:8453`). */
  network: string;
  family?: NetworkFamily;
  /** Amount in the asset's smallest units (`amount`, or `maxAmountRequired` in version 1). */
  amount: bigint;
  decimals?: number;
  /** Millionths of a US dollar (stablecoins at par), rounded up; unknown when the asset is not known. */
  usdMicros?: number;
  rejected?: OptionRejection;
}

/** What the choice came to. */
export type Choice =
  | { type: 'chosen'; chosen: PricedOption; options: PricedOption[] }
  /** Nothing payable: every option lacks a wallet, a scheme, an allowed network or a known asset. */
  | { type: 'none_payable'; options: PricedOption[] }
  /** Payable options exist, but even the cheapest is above the per-call cap. */
  | { type: 'over_cap'; cheapest: PricedOption; options: PricedOption[] };

/** The rules a choice follows. */
export interface ChoiceRules {
  networks: readonly NetworkEntry[];
  /** Allowed network ids or patterns; undefined allows every network. */
  allowed?: readonly string[];
  /** Preferred networks (ids or patterns), in order. */
  preference: readonly string[];
  maxMicrosPerCall: number;
}

/** Millionths of a US dollar for an amount of a `decimals`-decimal stablecoin, rounded up. */
export function toUsdMicros(amount: bigint, decimals: number): number {
  if (decimals >= 6) {
    const unit = 10n ** BigInt(decimals - 6);
    return Number((amount + unit - 1n) / unit);
  }
  return Number(amount * 10n ** BigInt(6 - decimals));
}

/** US dollars for display, two to six decimals: `$0.00`, `$0.001`, `$0.50`, `$3.00`. */
export function usd(micros: number): string {
  const [whole, fraction] = (micros / 1e6).toFixed(6).split('.') as [string, string];
  return `$${whole}.${fraction.replace(/0{1,4}$/, '').padEnd(2, '0')}`;
}

/** The largest amount of a `decimals`-decimal asset worth at most `micros` millionths of a dollar. */
export function atomicCap(micros: number, decimals: number): bigint {
  return decimals >= 6 ? BigInt(micros) * 10n ** BigInt(decimals - 6) : BigInt(micros) / 10n ** BigInt(6 - decimals);
}

function amountOf(option: PaymentRequirements): bigint {
  const raw = (option as { amount?: string }).amount ?? (option as { maxAmountRequired?: string }).maxAmountRequired ?? '';
  return /^\d+$/.test(raw) ? BigInt(raw) : -1n;
}

/** Values every option and says why each one that cannot be paid is left out. */
export function priceOptions(accepts: readonly PaymentRequirements[], x402Version: number, wallets: Wallets, rules: ChoiceRules): PricedOption[] {
  return accepts.map((option) => {
    const network = canonicalNetwork(option.network);
    const family = familyOf(network);
    const amount = amountOf(option);
    const decimals = tableEntry(rules.networks, network, option.asset)?.decimals ?? wallets.defaultAsset(option, x402Version)?.decimals;
    const priced: PricedOption = {
      option,
      network,
      ...(family ? { family } : {}),
      amount,
      ...(decimals !== undefined ? { decimals } : {}),
      ...(decimals !== undefined && amount >= 0n ? { usdMicros: toUsdMicros(amount, decimals) } : {}),
    };
    const unpayable = wallets.unpayable(option, x402Version);
    let rejected: OptionRejection | undefined = unpayable;
    if (!rejected && rules.allowed && !matchesAny(network, rules.allowed)) rejected = 'network_not_allowed';
    if (!rejected && priced.usdMicros === undefined) rejected = 'unknown_asset';
    if (!rejected && priced.usdMicros! > rules.maxMicrosPerCall) rejected = 'over_per_call_cap';
    return rejected ? { ...priced, rejected } : priced;
  });
}

/** Chooses the option to pay (see the module comment for the order). */
export function chooseOption(accepts: readonly PaymentRequirements[], x402Version: number, wallets: Wallets, rules: ChoiceRules): Choice {
  const options = priceOptions(accepts, x402Version, wallets, rules);
  const rank = (p: PricedOption) => {
    const at = patternIndex(p.network, rules.preference);
    return [p.usdMicros ?? Infinity, at < 0 ? Infinity : at, p.option.scheme === 'exact' ? 0 : 1, options.indexOf(p)];
  };
  const byRank = (a: PricedOption, b: PricedOption) => {
    const [x, y] = [rank(a), rank(b)];
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
    return 0;
  };
  const payable = options.filter((o) => !o.rejected).sort(byRank);
  if (payable[0]) return { type: 'chosen', chosen: payable[0], options };
  const overCap = options.filter((o) => o.rejected === 'over_per_call_cap').sort(byRank);
  if (overCap[0]) return { type: 'over_cap', cheapest: overCap[0], options };
  return { type: 'none_payable', options };
}
