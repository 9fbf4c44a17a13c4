/**
 * `tollbooth spending`: the agent's own view of what it paid, read from its spending ledger (the store of remote mode
 * and `tollbooth call`): today's counted total against the daily budget, and each paid call with where it stands.
 */
import type { ChainCheck, SpendLedger, SpendRecord, SpendStatus } from '../shared/spends.js';
import { Budget } from './budget.js';
import { usd } from './choose.js';
import { NOT_SEEN_WARNING } from './receipt-check.js';
import type { BudgetSettings } from './settings.js';

/** Where a paid call stands, as the user reads it (a claim given back without paying is `released`). */
export type SpendState = 'reserved' | 'settled' | 'pending' | 'failed' | 'released';

/** The ledger's statuses by the state shown. */
const STATUS_OF: Record<SpendState, SpendStatus> = {
  reserved: 'reserved',
  settled: 'settled',
  pending: 'pending',
  failed: 'failed',
  released: 'cancelled',
};

/** Every state, in the order `--state` lists them. */
export const SPEND_STATES = Object.keys(STATUS_OF) as SpendState[];

/** The options of `tollbooth spending`, checked by the command (src/cli/spending.ts). */
export interface SpendingOptions {
  /** Only payments made at or after this time. */
  since?: Date | undefined;
  state?: SpendState | undefined;
  tool?: string | undefined;
  limit: number;
  json: boolean;
}

/** One paid call as the report lists it. */
export interface SpendingEntry {
  time: string;
  tool: string;
  /** The seller's origin (`scheme://host[:port]`) the payment went to. */
  origin: string;
  state: SpendState;
  usd: string;
  protocol: string;
  network: string;
  asset: string;
  amount: string;
  /** `deposit` (batch-settlement: `usd` is what is still committed) or `voucher` (a call paid from a deposit). */
  kind?: 'deposit' | 'voucher';
  transaction?: string;
  note?: string;
  /** What the chain said of a payment the seller reported settled (AGENT_CHECK_RECEIPTS; absent: not checked). */
  chainCheck?: ChainCheck;
  /** Why this payment needs a look: the chain does not confirm what the seller said. */
  warning?: string;
}

/** What `tollbooth spending` reports. */
export interface SpendingReport {
  today: { day: string; spent: string; maxPerDay: string; remaining: string; maxPerCall: string };
  filter: { since: string | null; state: SpendState | null; tool: string | null; limit: number };
  count: { shown: number; total: number };
  /** The dollars of the listed payments that count (reserved, settled, pending), and of those settled. */
  totals: { counted: string; settled: string };
  entries: SpendingEntry[];
}

const stateOf = (status: SpendStatus): SpendState => (status === 'cancelled' ? 'released' : status);
const COUNTED: readonly SpendState[] = ['reserved', 'settled', 'pending'];
/** Every payment, however many: listSpends takes a limit. */
const ALL = 2 ** 31 - 1;

/** The origin of a spend's URL (rows written before origins were kept), or the URL itself when it is not one. */
function originOfResource(resource: string): string {
  return URL.canParse(resource) ? new URL(resource).origin : resource;
}

function entryOf(spend: SpendRecord): SpendingEntry {
  return {
    time: spend.createdAt,
    tool: spend.tool,
    origin: spend.origin ?? originOfResource(spend.resource),
    state: stateOf(spend.status),
    usd: usd(spend.usdMicros),
    protocol: spend.protocol ?? 'x402',
    network: spend.network,
    asset: spend.asset,
    amount: spend.amount,
    ...(spend.kind ? { kind: spend.kind } : {}),
    ...(spend.transaction ? { transaction: spend.transaction } : {}),
    ...(spend.note ? { note: spend.note } : {}),
    ...(spend.chainCheck ? { chainCheck: spend.chainCheck } : {}),
    ...(spend.chainCheck === 'not_seen' ? { warning: NOT_SEEN_WARNING } : {}),
  };
}

/** Builds the report from the ledger: today against the budget, and the payments `options` select, most recent first. */
export async function spendingReport(
  spends: SpendLedger,
  budget: BudgetSettings,
  options: SpendingOptions,
  now = new Date(),
): Promise<SpendingReport> {
  const status = await new Budget(spends, budget).status(now.toISOString().slice(0, 10));
  const listed = await spends.listSpends({
    limit: ALL,
    ...(options.state ? { statuses: [STATUS_OF[options.state]] } : {}),
  });
  const since = options.since?.getTime();
  const selected = listed.filter(
    (s) =>
      (since === undefined || Date.parse(s.createdAt) >= since) &&
      (options.tool === undefined || s.tool === options.tool),
  );
  const sum = (states: readonly SpendState[]) =>
    usd(selected.filter((s) => states.includes(stateOf(s.status))).reduce((total, s) => total + s.usdMicros, 0));
  return {
    today: {
      day: status.day,
      spent: usd(status.spentMicros),
      maxPerDay: usd(status.maxMicrosPerDay),
      remaining: usd(status.remainingMicros),
      maxPerCall: usd(status.maxMicrosPerCall),
    },
    filter: {
      since: options.since?.toISOString() ?? null,
      state: options.state ?? null,
      tool: options.tool ?? null,
      limit: options.limit,
    },
    count: { shown: Math.min(options.limit, selected.length), total: selected.length },
    totals: { counted: sum(COUNTED), settled: sum(['settled']) },
    entries: selected.slice(0, options.limit).map(entryOf),
  };
}

/** The report as text: today's line, one aligned line per payment, then the totals. */
export function formatSpending(report: SpendingReport): string {
  const { today, count, totals } = report;
  const lines = [
    `Today (${today.day}, UTC): ${today.spent} spent of ${today.maxPerDay} (BUDGET_MAX_USD_PER_DAY), ${today.remaining} left; ${today.maxPerCall} per call at most`,
    '',
  ];
  if (report.entries.length === 0) lines.push('No payments match.');
  else {
    const width = Math.max(...report.entries.map((e) => e.tool.length));
    for (const e of report.entries) {
      const where = `${e.protocol}${e.kind ? ` ${e.kind}` : ''} ${e.network}`;
      const tx = `${e.transaction ? `  tx ${e.transaction}` : ''}  at ${e.origin}`;
      const note = e.note && e.state !== 'settled' ? `  (${e.note})` : '';
      const chain = e.chainCheck === 'confirmed' ? '  (confirmed on chain)' : '';
      lines.push(
        `${e.time}  ${e.state.padEnd(8)}  ${e.tool.padEnd(width)}  ${e.usd.padStart(9)}  ${where}${tx}${note}${chain}`,
      );
      if (e.warning) lines.push(`    NOT CONFIRMED ON CHAIN: ${e.warning}`);
    }
  }
  lines.push(
    '',
    `${count.shown} of ${count.total} payment(s) shown; counted against budgets ${totals.counted} (reserved, settled, pending), settled ${totals.settled}`,
  );
  return `${lines.join('\n')}\n`;
}
