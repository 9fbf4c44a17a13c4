/**
 * The checks a payment to a seller's origin passes before anything is reserved or signed (docs/agents.md, "Sellers you
 * do not know"): the origin allow-list, its per-call cap, the price-drift guard against the expected price, and the
 * pay-to pinned per origin and network at the first payment (a different one needs the user's approval). The origin's
 * per-day cap is checked by the same reservation as the daily budget (budget.ts → the store's `claimSpend`).
 */
import { ToolError } from '../shared/errors.js';
import type { NewSpend } from '../shared/spends.js';
import { micros } from './budget.js';
import type { CallerDeps, CallOptions, CallTarget } from './call.js';
import { usd, type PricedOption } from './choose.js';
import { capsOf, driftCeiling, originAllowed, originOf, DEFAULT_PRICE_DRIFT_PERCENT } from './origins.js';
import { refused, type CallOutcome } from './outcome.js';

/** The origin of a request URL (`scheme://host[:port]`). */
export function requestOrigin(url: string): string {
  return originOf(url);
}

/** A refusal when the origin is not in AGENT_ORIGINS: nothing is sent to it. */
export function originRefusal(deps: CallerDeps, target: CallTarget, url: string): CallOutcome | undefined {
  const origin = requestOrigin(url);
  const settings = deps.settings.origins;
  if (originAllowed(settings, origin)) return undefined;
  return refused(
    new ToolError(
      'budget_exceeded',
      `Paying ${origin} (for ${target.name}) is not allowed: it is not in the user's AGENT_ORIGINS (${settings?.allowed?.join(', ')}); nothing was sent or paid.`,
      { details: { rule: 'origin_not_allowed', origin } },
    ),
  );
}

/** The origin's own per-call cap in millionths (AGENT_ORIGIN_LIMITS), if it has one. */
export function originCallCapMicros(deps: CallerDeps, url: string): number | undefined {
  const caps = capsOf(deps.settings.origins, requestOrigin(url));
  return caps.perCallUsd === undefined ? undefined : micros(caps.perCallUsd);
}

/** The origin's own per-day cap in millionths (AGENT_ORIGIN_LIMITS), if it has one. */
export function originDayCapMicros(deps: CallerDeps, origin: string): number | undefined {
  const caps = capsOf(deps.settings.origins, origin);
  return caps.perDayUsd === undefined ? undefined : micros(caps.perDayUsd);
}

/** The price the agent expects, in millionths: `--expect-price`, the catalog's, else the last settled for the tool at this origin and path. */
async function expectedMicros(
  deps: CallerDeps,
  target: CallTarget,
  url: string,
  options: CallOptions,
): Promise<{ micros: number; from: string } | undefined> {
  if (options.expectUsd !== undefined) return { micros: micros(options.expectUsd), from: 'the expected price given' };
  if (target.expectedUsdMicros !== undefined) return { micros: target.expectedUsdMicros, from: "the catalog's price" };
  const parsed = new URL(url);
  const last = await deps.spends.lastSettledPrice(target.name, parsed.origin, parsed.pathname);
  return last === undefined ? undefined : { micros: last, from: 'the last price paid there' };
}

/** A refusal when the chosen price is above the expected one by more than AGENT_PRICE_DRIFT: nothing is reserved or signed. */
export async function driftRefusal(
  deps: CallerDeps,
  target: CallTarget,
  url: string,
  chosen: PricedOption,
  options: CallOptions,
): Promise<CallOutcome | undefined> {
  const expected = await expectedMicros(deps, target, url, options);
  if (!expected || chosen.usdMicros === undefined) return undefined;
  const percent = deps.settings.origins?.driftPercent ?? DEFAULT_PRICE_DRIFT_PERCENT;
  const ceiling = driftCeiling(expected.micros, percent);
  if (chosen.usdMicros <= ceiling) return undefined;
  return refused(
    new ToolError(
      'budget_exceeded',
      `${target.name} at ${requestOrigin(url)} now asks ${usd(chosen.usdMicros)}, more than ${percent}% above ${expected.from} (${usd(expected.micros)}); nothing was paid. Check the seller, then pay with a new expected price (--expect-price) or raise AGENT_PRICE_DRIFT.`,
      { details: { rule: 'price_drift', expected: usd(expected.micros), asked: usd(chosen.usdMicros), percent } },
    ),
  );
}

/** Whether two addresses are the same (EVM addresses in any case; others exactly). */
function sameAddress(a: string, b: string): boolean {
  return a.startsWith('0x') ? a.toLowerCase() === b.toLowerCase() : a === b;
}

/** What the pay-to check decided: go on (re-pinning when the user approved a change), or a refusal. */
export type PayToVerdict = { type: 'go'; replace: boolean } | { type: 'refuse'; outcome: CallOutcome };

/** Checks the chosen pay-to against the origin's pin on its network; a different one is paid only when the user approves. */
export async function checkPayTo(
  deps: CallerDeps,
  target: CallTarget,
  spend: NewSpend,
  options: CallOptions,
): Promise<PayToVerdict> {
  const { origin, payTo, network } = spend;
  if (!origin || !payTo) return { type: 'go', replace: false };
  const pinned = await deps.spends.payToPin(origin, network);
  if (pinned === undefined || sameAddress(pinned, payTo)) return { type: 'go', replace: false };
  const question = `${origin} now asks to be paid at ${payTo} on ${network}, not at ${pinned} as at its first payment. Pay ${usd(spend.usdMicros)} for ${target.name} to the new address (and keep it from now on)?`;
  const answer = await options.approve(question);
  deps.log.warn('a seller changed its pay-to address', { origin, network, approved: answer === 'accepted' });
  if (answer === 'accepted') return { type: 'go', replace: true };
  const why =
    answer === 'declined'
      ? 'the user declined the change'
      : 'the user could not be asked (on the command line pass --yes)';
  return {
    type: 'refuse',
    outcome: refused(
      new ToolError(
        'payment_not_approved',
        `${origin} asks to be paid at ${payTo} on ${network}, but the agent pinned ${pinned} at its first payment there and ${why}; nothing was paid.`,
        { details: { rule: 'pay_to_changed', origin, network, pinned, asked: payTo } },
      ),
    ),
  };
}

/**
 * Holds the pay-to pin for the payment once it is reserved (so a concurrent call to a different address is caught);
 * false when another call pinned a different one meanwhile. The pin becomes final when the payment goes out (settled
 * or pending); a payment released or failed without going out drops it, or puts back the pin it replaced.
 */
export async function pinPayTo(deps: CallerDeps, spend: NewSpend, replace: boolean): Promise<boolean> {
  const { origin, payTo, network } = spend;
  if (!origin || !payTo) return true;
  const stored = await deps.spends.pinPayTo({ origin, network, payTo, spendId: spend.id }, replace);
  return sameAddress(stored, payTo);
}
