/**
 * Chooses which offered option to pay: x402 `accepts` entries and MPP `evm`/`charge` challenges alike. Among the
 * options the agent may and can pay (protocol in PAYMENT_PROTOCOLS, allowed network, a wallet and a scheme for it,
 * an asset it can value), the user's protocol order comes first (x402 before MPP by default), then the cheapest in
 * US dollars, ties broken by the user's network preference, then `batch-settlement` (payable only with
 * AGENT_BATCH_SETTLEMENT=on: one deposit, then a signature per call), then `exact` before other schemes, then the
 * server's order.
 */
import type { PaymentRequirements } from '@x402/core/types';
import type { NetworkEntry, NetworkFamily } from '../shared/networks.js';
import { isPlaceholderAddress } from '../shared/dev-addresses.js';
import type { PaymentProtocol } from '../shared/spends.js';
import type { RemoteChallenge } from './http.js';
import { asRequirements, type MppOffer } from './mpp.js';
import { canonicalNetwork, familyOf, matchesAny, patternIndex, tableEntry } from './networks.js';
import type { Wallets } from './wallets.js';

/** Why an option was left out. */
export type OptionRejection =
  /** It pays to a development placeholder or an all-zero address: nobody controls it, so it is never signed. */
  | 'placeholder_pay_to'
  | 'protocol_not_allowed'
  | 'unsupported_family'
  | 'unsupported_scheme'
  | 'no_wallet'
  | 'network_not_allowed'
  | 'unknown_asset'
  | 'over_per_call_cap';

/** The protocols the agent pays with, in order of preference, when the user sets nothing: x402 first. */
export const DEFAULT_PROTOCOLS: readonly PaymentProtocol[] = ['x402', 'mpp'];

/** What a 402 offered: an x402 challenge, MPP challenges, or both. */
export interface Offers {
  x402?: RemoteChallenge;
  mpp: readonly MppOffer[];
}

/** One advertised option, valued in US dollars, with why it cannot be paid (if it cannot). */
export interface PricedOption {
  /** The protocol that offered it (absent: x402). */
  protocol?: PaymentProtocol;
  /** For MPP, the challenge it answers; `option` is then its x402-shaped reading (network, asset, amount, pay-to). */
  mpp?: MppOffer;
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
  /** Protocols allowed, in order of preference (PAYMENT_PROTOCOLS); unset, x402 then MPP. */
  protocols?: readonly PaymentProtocol[];
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
  const raw =
    (option as { amount?: string }).amount ?? (option as { maxAmountRequired?: string }).maxAmountRequired ?? '';
  return /^\d+$/.test(raw) ? BigInt(raw) : -1n;
}

/** Values every option and says why each one that cannot be paid is left out. */
export function priceOptions(
  accepts: readonly PaymentRequirements[],
  x402Version: number,
  wallets: Wallets,
  rules: ChoiceRules,
): PricedOption[] {
  return accepts.map((option) => {
    const network = canonicalNetwork(option.network);
    const family = familyOf(network);
    const amount = amountOf(option);
    const decimals =
      tableEntry(rules.networks, network, option.asset)?.decimals ??
      wallets.defaultAsset(option, x402Version)?.decimals;
    const priced: PricedOption = {
      option,
      network,
      ...(family ? { family } : {}),
      amount,
      ...(decimals !== undefined ? { decimals } : {}),
      ...(decimals !== undefined && amount >= 0n ? { usdMicros: toUsdMicros(amount, decimals) } : {}),
    };
    let rejected: OptionRejection | undefined = isPlaceholderAddress(option.payTo)
      ? 'placeholder_pay_to'
      : wallets.unpayable(option, x402Version);
    if (!rejected && rules.allowed && !matchesAny(network, rules.allowed)) rejected = 'network_not_allowed';
    if (!rejected && priced.usdMicros === undefined) rejected = 'unknown_asset';
    if (!rejected && priced.usdMicros! > rules.maxMicrosPerCall) rejected = 'over_per_call_cap';
    return rejected ? { ...priced, rejected } : priced;
  });
}

/**
 * Values an MPP offer like an x402 `exact` entry: it needs the EVM wallet, an `evm`/`charge` this client signs, and
 * its token in the agent's network table with its decimals and EIP-712 domain (the challenge does not carry them).
 */
export function priceMppOffer(offer: MppOffer, wallets: Wallets, rules: ChoiceRules): PricedOption {
  const option = asRequirements(offer);
  const network = canonicalNetwork(option.network);
  const amount = amountOf(option);
  const entry = offer.charge ? tableEntry(rules.networks, network, option.asset) : undefined;
  const known = entry?.name !== undefined && entry.version !== undefined;
  const priced: PricedOption = {
    protocol: 'mpp',
    mpp: offer,
    option,
    network,
    ...(offer.charge ? { family: 'evm' as const } : {}),
    amount,
    ...(known ? { decimals: entry.decimals } : {}),
    ...(known && amount >= 0n ? { usdMicros: toUsdMicros(amount, entry.decimals) } : {}),
  };
  let rejected: OptionRejection | undefined;
  if (isPlaceholderAddress(option.payTo)) rejected = 'placeholder_pay_to';
  else if (!(rules.protocols ?? DEFAULT_PROTOCOLS).includes('mpp')) rejected = 'protocol_not_allowed';
  else if (!offer.charge) rejected = 'unsupported_scheme';
  else if (!wallets.addresses.evm) rejected = 'no_wallet';
  else if (rules.allowed && !matchesAny(network, rules.allowed)) rejected = 'network_not_allowed';
  else if (priced.usdMicros === undefined) rejected = 'unknown_asset';
  else if (priced.usdMicros > rules.maxMicrosPerCall) rejected = 'over_per_call_cap';
  return rejected ? { ...priced, rejected } : priced;
}

/** Values every offered option, x402 and MPP, in the server's order (x402 entries first). */
export function priceOffers(offers: Offers, wallets: Wallets, rules: ChoiceRules): PricedOption[] {
  const x402Allowed = (rules.protocols ?? DEFAULT_PROTOCOLS).includes('x402');
  const x402 = offers.x402
    ? priceOptions(offers.x402.accepts, offers.x402.x402Version, wallets, rules).map((p): PricedOption => ({
        ...p,
        protocol: 'x402',
        ...(x402Allowed || p.rejected === 'placeholder_pay_to' ? {} : { rejected: 'protocol_not_allowed' as const }),
      }))
    : [];
  return [...x402, ...offers.mpp.map((offer) => priceMppOffer(offer, wallets, rules))];
}

/** Chooses the option to pay among x402 entries and MPP challenges (see the module comment for the order). */
export function chooseFromOffers(offers: Offers, wallets: Wallets, rules: ChoiceRules): Choice {
  return rankAndChoose(priceOffers(offers, wallets, rules), rules);
}

/** Chooses the option to pay among x402 entries (see the module comment for the order). */
export function chooseOption(
  accepts: readonly PaymentRequirements[],
  x402Version: number,
  wallets: Wallets,
  rules: ChoiceRules,
): Choice {
  return rankAndChoose(priceOptions(accepts, x402Version, wallets, rules), rules);
}

/** Schemes preferred among options of the same price and network rank, in order; any other comes after. */
const SCHEME_ORDER: readonly string[] = ['batch-settlement', 'exact'];

function rankAndChoose(options: PricedOption[], rules: ChoiceRules): Choice {
  const protocols = rules.protocols ?? DEFAULT_PROTOCOLS;
  const rank = (p: PricedOption) => {
    const at = patternIndex(p.network, rules.preference);
    const order = protocols.indexOf(p.protocol ?? 'x402');
    return [
      order < 0 ? Infinity : order,
      p.usdMicros ?? Infinity,
      at < 0 ? Infinity : at,
      SCHEME_ORDER.indexOf(p.option.scheme) < 0 ? SCHEME_ORDER.length : SCHEME_ORDER.indexOf(p.option.scheme),
      options.indexOf(p),
    ];
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
