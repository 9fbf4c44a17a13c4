/** Words for the caller: why nothing could be paid, and what a dry run would do. */
import { ToolError } from '../shared/errors.js';
import type { Budget } from './budget.js';
import { usd, type Choice, type Offers, type OptionRejection, type PricedOption } from './choose.js';
import type { CallOutcome, DryRunReport, OptionReport } from './outcome.js';
import type { Wallets } from './wallets.js';

/** One line on how to give the agent a wallet. */
export const WALLET_HINT =
  'No wallet is configured, so nothing was paid: give the agent a wallet with WALLET_EVM_PRIVATE_KEY, WALLET_SOLANA_SECRET_KEY or WALLET_ALGORAND_MNEMONIC (or the same name + _FILE), or pay one of `accepts` yourself.';

/** Why an option paying to a development placeholder (or an all-zero address) is never signed. */
export const PLACEHOLDER_PAY_TO_TEXT =
  'this seller is a development server with placeholder addresses; nobody controls them — not paying';

const REASON_TEXT: Record<OptionRejection, string> = {
  placeholder_pay_to: PLACEHOLDER_PAY_TO_TEXT,
  protocol_not_allowed: 'protocol not in PAYMENT_PROTOCOLS',
  unsupported_family: 'this client cannot pay on that network family',
  unsupported_scheme: 'this client does not sign that scheme, version or MPP method',
  no_wallet: 'no wallet for that network family',
  network_not_allowed: 'network not in BUDGET_NETWORKS',
  unknown_asset:
    'asset unknown to this client (add it to NETWORKS_JSON with its decimals; for MPP also its EIP-712 name and version)',
  over_per_call_cap: 'over the per-call limit',
};

function report(p: PricedOption): OptionReport {
  return {
    protocol: p.protocol ?? 'x402',
    scheme: p.mpp ? `${p.mpp.challenge.method}/${p.mpp.challenge.intent}` : p.option.scheme,
    network: p.option.network,
    asset: p.option.asset,
    amount: p.amount.toString(),
    ...(p.usdMicros !== undefined ? { usd: usd(p.usdMicros) } : {}),
    ...(p.rejected ? { rejected: p.rejected } : {}),
  };
}

/** How an option is named in messages: `exact on eip155:8453`, `MPP evm/charge on eip155:8453`. */
export function optionLabel(p: PricedOption): string {
  return p.mpp
    ? `MPP ${p.mpp.challenge.method}/${p.mpp.challenge.intent} on ${p.network}`
    : `${p.option.scheme} on ${p.option.network}`;
}

function summary(options: readonly PricedOption[]): string {
  return options.map((o) => `${optionLabel(o)}: ${REASON_TEXT[o.rejected ?? 'unsupported_scheme']}`).join('; ');
}

/** The challenges of an outcome that shows what was asked: the x402 challenge and/or the MPP challenges. */
export function shownOffers(offers: Offers): { challenge?: DryRunReport['challenge']; mpp?: DryRunReport['mpp'] } {
  return {
    ...(offers.x402 ? { challenge: offers.x402 } : {}),
    ...(offers.mpp.length > 0 ? { mpp: offers.mpp.map((o) => o.challenge) } : {}),
  };
}

/** The outcome of a challenge no option of which can be paid: the requirements with a hint, or a budget refusal. */
export function notPayable(
  tool: string,
  offers: Offers,
  options: readonly PricedOption[],
  wallets: Wallets,
  budget: Budget,
): CallOutcome {
  if (options.length > 0 && options.every((o) => o.rejected === 'placeholder_pay_to')) {
    const error = new ToolError(
      'placeholder_pay_to',
      `Not paying for ${tool}: ${PLACEHOLDER_PAY_TO_TEXT} (pay-to ${[...new Set(options.map((o) => o.option.payTo))].join(', ')}). Nothing was signed or paid; point the agent at a deployment with real PAY_TO_* addresses.`,
    );
    return { type: 'refused', error };
  }
  if (Object.keys(wallets.addresses).length === 0)
    return { type: 'payment_required', ...shownOffers(offers), hint: WALLET_HINT };
  if (options.some((o) => o.rejected === 'network_not_allowed')) {
    const error = new ToolError(
      'budget_exceeded',
      `No option offered for ${tool} is on a network the user allows and holds a wallet for (BUDGET_NETWORKS=${budget.settings.networks?.join(',')}); nothing was paid. Offered: ${summary(options)}.`,
    );
    return { type: 'refused', error };
  }
  return {
    type: 'payment_required',
    ...shownOffers(offers),
    hint: `Nothing was paid: this client cannot pay any option offered for ${tool} (${summary(options)}). Configure a wallet for one of these networks, or pay one of \`accepts\` yourself.`,
  };
}

/** The report of `--dry-run`: every option valued, the one a real call would pay, and the budget it would be paid from. */
export async function dryRunReport(
  tool: string,
  url: string,
  offers: Offers,
  choice: Choice,
  budget: Budget,
  maxMicrosPerCall: number,
): Promise<DryRunReport> {
  const status = await budget.status();
  const chosen = choice.type === 'chosen' ? choice.chosen : undefined;
  const fits = chosen !== undefined && chosen.usdMicros! <= status.remainingMicros;
  const needsApproval = chosen !== undefined && budget.needsApproval(chosen.usdMicros!);
  let verdict: string;
  if (!chosen)
    verdict =
      choice.type === 'over_cap'
        ? `would not pay: the cheapest option costs ${usd(choice.cheapest.usdMicros!)}, over the per-call limit of ${usd(maxMicrosPerCall)}`
        : choice.options.length > 0 && choice.options.every((o) => o.rejected === 'placeholder_pay_to')
          ? `would not pay: ${PLACEHOLDER_PAY_TO_TEXT}`
          : 'would not pay: no option can be paid with this configuration';
  else if (!fits)
    verdict = `would not pay: ${usd(chosen.usdMicros!)} is more than the ${usd(status.remainingMicros)} left of today's budget`;
  else
    verdict = `would pay ${usd(chosen.usdMicros!)} with ${optionLabel(chosen)}${needsApproval ? ' after the user approves it (--yes)' : ''}`;
  return {
    tool,
    url,
    ...(offers.x402 ? { x402Version: offers.x402.x402Version } : {}),
    options: choice.options.map(report),
    ...(chosen ? { chosen: report(chosen) } : {}),
    needsApproval,
    verdict,
    budget: {
      day: status.day,
      spentToday: usd(status.spentMicros),
      remainingToday: usd(status.remainingMicros),
      maxPerCall: usd(maxMicrosPerCall),
      maxPerDay: usd(status.maxMicrosPerDay),
      ...(status.askAboveMicros !== undefined ? { askAbove: usd(status.askAboveMicros) } : {}),
    },
    ...shownOffers(offers),
  };
}
