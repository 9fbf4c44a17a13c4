/**
 * How much a batch-settlement deposit may be (batch-pay.ts): a deposit is money sent to one seller's origin in one
 * payment, so it is bounded like a payment there: by what is left of today's budget, by the origin's per-call cap and
 * by what is left of the origin's per-day cap (AGENT_ORIGIN_LIMITS, docs/agents.md). The tightest bound is the one a
 * refusal names.
 */
import type { NewSpend, SpendLedger } from '../shared/spends.js';
import type { Budget } from './budget.js';
import { micros } from './budget.js';
import { atomicCap, usd } from './choose.js';
import { capsOf, type OriginSettings } from './origins.js';

/** The most a deposit may be, what sets it, and the origin's per-day cap for the store's atomic claim. */
export interface DepositBounds {
  /** The most the deposit may be, in the asset's smallest units. */
  most: bigint;
  /** What sets it, as the end of a refusal: "only $0.004 of today's budget is left". */
  limit: string;
  /** The rule that sets it, in a refusal's details, when it is the origin's own cap. */
  rule?: 'origin_per_call' | 'origin_per_day';
  /** The origin's per-day cap in millionths (AGENT_ORIGIN_LIMITS), checked again by the store's claim of the deposit. */
  originDayMicros?: number;
}

/** What the deposit of `spend` (one call's booking on a channel of its origin) may be today. */
export async function depositBounds(
  budget: Budget,
  spends: SpendLedger,
  origins: OriginSettings | undefined,
  spend: NewSpend,
  decimals: number,
): Promise<DepositBounds> {
  const left = (await budget.status(spend.day)).remainingMicros;
  const bounds: DepositBounds[] = [
    { most: atomicCap(left, decimals), limit: `only ${usd(left)} of today's budget is left` },
  ];
  const origin = spend.origin;
  const caps = origin ? capsOf(origins, origin) : {};
  if (origin && caps.perCallUsd !== undefined) {
    const cap = micros(caps.perCallUsd);
    const limit = `${origin} may be paid at most ${usd(cap)} at once (its per-call cap in AGENT_ORIGIN_LIMITS)`;
    bounds.push({ most: atomicCap(cap, decimals), limit, rule: 'origin_per_call' });
  }
  let originDayMicros: number | undefined;
  if (origin && caps.perDayUsd !== undefined) {
    originDayMicros = micros(caps.perDayUsd);
    const room = Math.max(0, originDayMicros - (await spends.originSpentOn(origin, spend.day)));
    const limit = `only ${usd(room)} of today's ${usd(originDayMicros)} for ${origin} (AGENT_ORIGIN_LIMITS) is left`;
    bounds.push({ most: atomicCap(room, decimals), limit, rule: 'origin_per_day' });
  }
  const tightest = bounds.reduce((a, b) => (b.most < a.most ? b : a));
  return { ...tightest, ...(originDayMicros !== undefined ? { originDayMicros } : {}) };
}
