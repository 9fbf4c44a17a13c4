/**
 * What `tollbooth call --dry-run` prints by default: a short summary of the report (the tool, each option's network,
 * asset and amount, the option a real call would pay and where the money would go, the budget). The whole report,
 * with every requirement of the challenge, is printed with `--full`.
 */
import type { DryRunReport, OptionReport } from './outcome.js';

/** The short form of a dry run's report. */
export interface DryRunSummary {
  tool: string;
  url: string;
  verdict: string;
  /** One line per advertised option: protocol, scheme, network, amount and asset, dollars, and why it would not be paid. */
  options: string[];
  chosen?: string;
  /** Where the chosen option's payment would go. */
  payTo?: string;
  needsApproval: boolean;
  budget: DryRunReport['budget'];
  more: string;
}

/** One option as a line: `x402 exact on eip155:8453: 1000 units of 0x8335… ($0.001)`. */
function optionLine(option: OptionReport): string {
  const usd = option.usd !== undefined ? ` (${option.usd})` : '';
  const rejected = option.rejected ? `; not paid: ${option.rejected}` : '';
  return `${option.protocol} ${option.scheme} on ${option.network}: ${option.amount} units of ${option.asset}${usd}${rejected}`;
}

/** The pay-to address of the chosen option, found in the x402 challenge or the MPP challenge it came from. */
function payToOf(report: DryRunReport, chosen: OptionReport): string | undefined {
  if (chosen.protocol === 'x402') {
    const entry = report.challenge?.accepts.find(
      (a) => a.network === chosen.network && a.scheme === chosen.scheme && a.asset === chosen.asset,
    );
    return entry?.payTo;
  }
  const recipient = report.mpp?.find((c) => c.request.currency === chosen.asset)?.request.recipient;
  return typeof recipient === 'string' ? recipient : undefined;
}

/** The short summary of a dry run's report. */
export function dryRunSummary(report: DryRunReport): DryRunSummary {
  const payTo = report.chosen ? payToOf(report, report.chosen) : undefined;
  return {
    tool: report.tool,
    url: report.url,
    verdict: report.verdict,
    options: report.options.map(optionLine),
    ...(report.chosen ? { chosen: optionLine(report.chosen) } : {}),
    ...(payTo ? { payTo } : {}),
    needsApproval: report.needsApproval,
    budget: report.budget,
    more: 'run again with --dry-run --full for the whole report: every payment requirement of the challenge',
  };
}
