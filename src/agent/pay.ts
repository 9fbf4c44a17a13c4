/**
 * Paying the option the chooser picked: claim it against the daily budget in the spending ledger, ask the user above
 * the approval threshold, sign it (the official x402 client, or mppx's EVM charge client for MPP) and deliver it.
 * Whatever stops it before the payment leaves releases the claim: nothing was paid.
 */
import { randomUUID } from 'node:crypto';
import type { PaymentRequired } from '@x402/core/types';
import {
  appendPaymentIdentifierToExtensions,
  generatePaymentId,
  PAYMENT_IDENTIFIER,
} from '@x402/extensions/payment-identifier';
import { ToolError } from '../shared/errors.js';
import type { NewSpend } from '../shared/spends.js';
import { paymentNote, type DeliveryContext } from './booking.js';
import { budgetDay } from './budget.js';
import type { CallerDeps, CallOptions, CallTarget } from './call.js';
import { atomicCap, usd, type Offers, type PricedOption } from './choose.js';
import { deliver } from './deliver.js';
import { optionLabel } from './explain.js';
import type { McpRemotes } from './mcp-remote.js';
import { checkPayTo, originDayCapMicros, pinPayTo, requestOrigin } from './origins-guard.js';
import { signMppCredential } from './mpp.js';
import { tableEntry } from './networks.js';
import { refused, type CallOutcome } from './outcome.js';
import type { RemoteRequest, SignedPayment } from './remote.js';

/** The chosen option of one call: what it pays for, the option, and the per-call cap it is signed under. */
export interface ChosenPayment {
  target: CallTarget;
  request: RemoteRequest;
  /** The request hash that finds the payment again while its outcome is unknown. */
  hash: string;
  offers: Offers;
  chosen: PricedOption;
  capMicros: number;
}

/** What delivering one payment of the caller needs. */
export function deliveryContext(
  deps: CallerDeps,
  target: CallTarget,
  request: RemoteRequest,
  spend: NewSpend,
  resumed: boolean,
): DeliveryContext & { mcp: McpRemotes } {
  const { spends, budget, log, settings, networks, receiptChecks, mcp } = deps;
  return {
    mcp,
    spends,
    budget,
    log,
    timeoutMs: settings.timeoutMs,
    output: target.output,
    tool: target.name,
    request,
    spend,
    resumed,
    networks,
    ...(receiptChecks ? { receiptChecks } : {}),
  };
}

/** The spend a payment is claimed as; a `payment-identifier` id when the x402 challenge declares the extension. */
function newSpend({ target, request, hash, offers, chosen }: ChosenPayment): NewSpend {
  const challenge = offers.x402;
  const protocol = chosen.protocol ?? 'x402';
  const declaresId =
    protocol === 'x402' && challenge?.x402Version === 2 && challenge.extensions?.[PAYMENT_IDENTIFIER] !== undefined;
  const paymentId = declaresId ? generatePaymentId() : undefined;
  return {
    id: randomUUID(),
    day: budgetDay(),
    tool: target.name,
    resource: request.url,
    origin: requestOrigin(request.url),
    payTo: chosen.option.payTo,
    requestHash: hash,
    network: chosen.network,
    asset: chosen.option.asset,
    amount: chosen.amount.toString(),
    usdMicros: chosen.usdMicros!,
    protocol,
    ...(paymentId ? { paymentId } : {}),
  };
}

/** Asks the user when the payment is above the threshold; a refusal (after releasing the claim) unless approved. */
async function approval(
  deps: CallerDeps,
  pay: ChosenPayment,
  spend: NewSpend,
  spentMicros: number,
  options: CallOptions,
): Promise<CallOutcome | undefined> {
  const { budget, spends } = deps;
  if (!budget.needsApproval(spend.usdMicros)) return undefined;
  const question = `Pay ${usd(spend.usdMicros)} (${spend.amount} units of ${spend.asset} on ${spend.network}${spend.protocol === 'mpp' ? ', with MPP' : ''}) for ${pay.target.name} at ${pay.request.url}? Today so far: ${usd(spentMicros - spend.usdMicros)} of ${usd(budget.maxMicrosPerDay)}.`;
  const answer = await options.approve(question);
  if (answer === 'accepted') return undefined;
  await spends.releaseSpend(spend.id, answer === 'declined' ? 'declined by the user' : 'approval could not be asked');
  const why =
    answer === 'declined'
      ? 'the user declined it'
      : 'it is above the approval threshold and the user could not be asked (the MCP client does not support elicitation; on the command line pass --yes)';
  return refused(
    new ToolError(
      'payment_not_approved',
      `The payment of ${usd(spend.usdMicros)} for ${pay.target.name} was not made: ${why}. ${budget.describe()}.`,
    ),
  );
}

/** Signs the chosen option: the official x402 client, or mppx's EVM charge client with the token's EIP-712 domain from the table. */
async function sign(deps: CallerDeps, pay: ChosenPayment, paymentId: string | undefined): Promise<SignedPayment> {
  const { wallets, networks } = deps;
  const { chosen, offers } = pay;
  const capAtomic = atomicCap(pay.capMicros, chosen.decimals!);
  if (chosen.mpp) {
    const entry = tableEntry(networks, chosen.network, chosen.option.asset);
    if (!entry?.name || !entry.version) throw new Error("the token's EIP-712 domain is not in the network table");
    return signMppCredential(chosen.mpp, wallets.evmAccount(), { name: entry.name, version: entry.version }, capAtomic);
  }
  const challenge = offers.x402!;
  const extensions = paymentId
    ? appendPaymentIdentifierToExtensions(structuredClone(challenge.extensions ?? {}), paymentId)
    : challenge.extensions;
  const forPayment = {
    ...challenge,
    accepts: [chosen.option],
    ...(extensions ? { extensions } : {}),
  } as unknown as PaymentRequired;
  const payload = await wallets
    .clientFor(chosen.option, challenge.x402Version, capAtomic)
    .createPaymentPayload(forPayment);
  return { protocol: 'x402', payload };
}

/** The refusal of a payment over the day's budget, or over its origin's day cap (AGENT_ORIGIN_LIMITS). */
function overBudget(
  deps: CallerDeps,
  pay: ChosenPayment,
  spend: NewSpend,
  reserved: { spentMicros: number; originSpentMicros?: number },
  originCap: number | undefined,
): CallOutcome {
  const { budget } = deps;
  const name = pay.target.name;
  const cost = usd(spend.usdMicros);
  const fitsDay = reserved.spentMicros + spend.usdMicros <= budget.maxMicrosPerDay;
  if (fitsDay && originCap !== undefined && reserved.originSpentMicros !== undefined) {
    const left = Math.max(0, originCap - reserved.originSpentMicros);
    return refused(
      new ToolError(
        'budget_exceeded',
        `${name} costs ${cost}, but only ${usd(left)} of today's ${usd(originCap)} for ${spend.origin} (AGENT_ORIGIN_LIMITS) is left (${usd(reserved.originSpentMicros)} spent there or being paid, UTC day ${spend.day}); nothing was paid.`,
        { details: { rule: 'origin_per_day', origin: spend.origin } },
      ),
    );
  }
  const left = Math.max(0, budget.maxMicrosPerDay - reserved.spentMicros);
  return refused(
    new ToolError(
      'budget_exceeded',
      `${name} costs ${cost}, but only ${usd(left)} of today's ${usd(budget.maxMicrosPerDay)} budget is left (${usd(reserved.spentMicros)} spent or being paid, UTC day ${spend.day}); nothing was paid. The budget renews at 00:00 UTC; ${budget.describe()}.`,
    ),
  );
}

/** Claims the chosen option against the budget, asks for approval when needed, signs it and delivers it. */
export async function payChosen(deps: CallerDeps, pay: ChosenPayment, options: CallOptions): Promise<CallOutcome> {
  const { budget, spends } = deps;
  const { target, chosen } = pay;
  if (chosen.option.scheme === 'batch-settlement' && deps.batch) return deps.batch.pay(deps, pay, options);
  const spend = newSpend(pay);
  const payTo = await checkPayTo(deps, target, spend, options);
  if (payTo.type === 'refuse') return payTo.outcome;
  const originCap = originDayCapMicros(deps, spend.origin!);
  const reserved = await budget.reserve(spend, originCap);
  if (reserved.type === 'over_budget') return overBudget(deps, pay, spend, reserved, originCap);
  if (!(await pinPayTo(deps, spend, payTo.replace))) {
    await spends.releaseSpend(spend.id, 'another call pinned a different pay-to for this origin meanwhile');
    return refused(
      new ToolError(
        'payment_not_approved',
        `${spend.origin} gave another call a different pay-to address on ${spend.network} at the same time; nothing was paid. Call again to be asked about it.`,
        { details: { rule: 'pay_to_changed', origin: spend.origin } },
      ),
    );
  }
  const notApproved = await approval(deps, pay, spend, reserved.spentMicros, options);
  if (notApproved) return notApproved;
  let payment: SignedPayment;
  try {
    payment = await sign(deps, pay, spend.paymentId);
  } catch (err) {
    await spends.releaseSpend(spend.id, 'could not sign the payment');
    const reason = String((err as Error)?.message ?? err)
      .split('\n', 1)[0]!
      .slice(0, 300);
    return refused(
      new ToolError(
        'payment_failed',
        `Could not sign the payment for ${target.name} (${optionLabel(chosen)}: ${reason}); nothing was paid.`,
      ),
      await paymentNote({ budget, spend }, 'cancelled'),
    );
  }
  return deliver(deliveryContext(deps, target, pay.request, spend, false), payment);
}
