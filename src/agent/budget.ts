import type { NewSpend, SpendClaimResult, SpendLedger } from '../shared/spends.js';
import { usd } from './choose.js';
import type { BudgetSettings } from './settings.js';

/** The UTC day (YYYY-MM-DD) a payment made at `at` counts against. */
export function budgetDay(at: Date = new Date()): string {
  return at.toISOString().slice(0, 10);
}

/** Dollars as whole millionths (what the store counts in). */
export function micros(dollars: number): number {
  return Math.round(dollars * 1e6);
}

/** Today's spending against the limits, in millionths of a dollar. */
export interface BudgetStatus {
  day: string;
  spentMicros: number;
  remainingMicros: number;
  maxMicrosPerCall: number;
  maxMicrosPerDay: number;
  askAboveMicros?: number;
}

/** The user's budget over the spending ledger: per-call cap, daily cap (counted atomically in the store), approval threshold, allow-lists. */
export class Budget {
  readonly maxMicrosPerCall: number;
  readonly maxMicrosPerDay: number;
  readonly askAboveMicros: number | undefined;

  constructor(
    private readonly spends: SpendLedger,
    readonly settings: BudgetSettings,
  ) {
    this.maxMicrosPerCall = micros(settings.maxUsdPerCall);
    this.maxMicrosPerDay = micros(settings.maxUsdPerDay);
    this.askAboveMicros = settings.askAboveUsd === undefined ? undefined : micros(settings.askAboveUsd);
  }

  /** Whether the user lets the agent pay for this tool (BUDGET_TOOLS; unset allows all). */
  allowsTool(name: string): boolean {
    return this.settings.tools === undefined || this.settings.tools.includes(name);
  }

  /** Whether a payment of this size needs the user's approval first. */
  needsApproval(usdMicros: number): boolean {
    return this.askAboveMicros !== undefined && usdMicros > this.askAboveMicros;
  }

  /**
   * Claims the payment if the day's budget (and, given, its origin's day cap) allows it; concurrent calls are counted
   * exactly (the ledger checks both totals in one atomic step).
   */
  reserve(spend: NewSpend, originDayLimitMicros?: number): Promise<SpendClaimResult> {
    return originDayLimitMicros === undefined
      ? this.spends.claimSpend(spend, this.maxMicrosPerDay)
      : this.spends.claimSpend(spend, this.maxMicrosPerDay, originDayLimitMicros);
  }

  /** Today's spending and what is left of the daily budget. */
  async status(day = budgetDay()): Promise<BudgetStatus> {
    const spentMicros = await this.spends.spentOn(day);
    return {
      day,
      spentMicros,
      remainingMicros: Math.max(0, this.maxMicrosPerDay - spentMicros),
      maxMicrosPerCall: this.maxMicrosPerCall,
      maxMicrosPerDay: this.maxMicrosPerDay,
      ...(this.askAboveMicros !== undefined ? { askAboveMicros: this.askAboveMicros } : {}),
    };
  }

  /** The limits in one sentence, for messages. */
  describe(maxMicrosPerCall = this.maxMicrosPerCall): string {
    const ask = this.askAboveMicros !== undefined ? `, approval asked above ${usd(this.askAboveMicros)}` : '';
    return `limits: ${usd(maxMicrosPerCall)} per call (BUDGET_MAX_USD_PER_CALL), ${usd(this.maxMicrosPerDay)} per UTC day (BUDGET_MAX_USD_PER_DAY)${ask}`;
  }
}
