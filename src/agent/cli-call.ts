/**
 * `tollbooth call <tool> --input '<json>'`: one call of a remote tool for scripts and direct callers, with the same
 * wallets, budget and store as remote mode. The result goes to stdout as JSON; the receipt and messages to stderr.
 */
import type { Logger } from '../shared/log.js';
import { ConfigError } from '../shared/env.js';
import type { OpenSpends } from '../shared/spends.js';
import type { ToolEndpoint } from '../shared/tool-endpoint.js';
import { agentProblems, createAgent } from './agent.js';
import type { CallTarget } from './call.js';
import { loadCatalog, remotesOfSettings } from './catalog.js';
import { dryRunSummary } from './dry-run-summary.js';
import type { RemoteChallenge } from './http.js';
import type { MppChallenge } from './mpp.js';
import type { CallOutcome } from './outcome.js';
import { targetOf } from './mcp.js';
import { McpRemotes } from './mcp-remote.js';
import { agentLogger, writeErr, writeOut } from './output.js';
import { loadAgentConfig, type AgentConfig } from './settings.js';

/** Exit codes of `tollbooth call`. */
export const CALL_EXIT = { ok: 0, failed: 1, usage: 2, notPaid: 3 } as const;

/** `tollbooth call` arguments, parsed by the command line (src/cli/call.ts). */
export interface CallArgs {
  tool: string;
  input: unknown;
  maxUsd?: number;
  dryRun: boolean;
  /** With `dryRun`: print the whole report (every requirement of the challenge), not its short summary. */
  full?: boolean;
  yes: boolean;
  /** Settings the command line overrides (the `--remote…` options). */
  env: Record<string, string>;
}

/** The exit code of an outcome (`CALL_EXIT`), for `tollbooth call` and `tollbooth fetch` alike. */
export function exitCodeOf(outcome: CallOutcome): number {
  switch (outcome.type) {
    case 'success':
    case 'dry_run':
      return CALL_EXIT.ok;
    case 'payment_required':
      return CALL_EXIT.notPaid;
    case 'refused':
      return ['budget_exceeded', 'payment_not_approved', 'placeholder_pay_to', 'invalid_input'].includes(
        outcome.error.code,
      )
        ? CALL_EXIT.notPaid
        : CALL_EXIT.failed;
    case 'remote_error':
      return CALL_EXIT.failed;
  }
}

/** What stdout says of a call nothing could pay for: the reason and one line per advertised option (x402 entries, then MPP challenges). */
export function notPaidSummary(
  challenge: RemoteChallenge | undefined,
  reason: string,
  mpp: readonly MppChallenge[] = [],
): { paid: false; reason: string; x402Version?: number; options: string[]; more: string } {
  const options = (challenge?.accepts ?? []).map((a) => {
    const amount =
      (a as { amount?: string; maxAmountRequired?: string }).amount ??
      (a as { maxAmountRequired?: string }).maxAmountRequired;
    return `${a.scheme} on ${a.network}: ${amount} units of ${a.asset}`;
  });
  for (const c of mpp) {
    const r = c.request as { amount?: unknown; currency?: unknown; methodDetails?: { chainId?: unknown } };
    const where = r.methodDetails?.chainId !== undefined ? ` on eip155:${String(r.methodDetails.chainId)}` : '';
    options.push(`MPP ${c.method}/${c.intent}${where}: ${String(r.amount)} units of ${String(r.currency)}`);
  }
  return {
    paid: false,
    reason,
    ...(challenge ? { x402Version: challenge.x402Version } : {}),
    options,
    more: 'run again with --dry-run --full for the full payment requirements and the budget',
  };
}

/** Writes one labelled line on stderr (a string as it is, anything else as JSON). */
export function stderrLine(label: string, v: unknown): void {
  writeErr(`${label}: ${typeof v === 'string' ? v : JSON.stringify(v)}\n`);
}

/** Writes an outcome's receipt (x402 or MPP) and payment note on stderr, as `call` and `fetch` both do. */
export function printPaymentNotes(outcome: CallOutcome): void {
  if ('receipt' in outcome && outcome.receipt) stderrLine('receipt', outcome.receipt);
  if ('mppReceipt' in outcome && outcome.mppReceipt) stderrLine('receipt', outcome.mppReceipt);
  if ('payment' in outcome && outcome.payment) stderrLine('payment', outcome.payment);
}

/** Writes an outcome: result or report on stdout, receipt and messages on stderr. */
function print(outcome: CallOutcome, full = false): void {
  const out = (v: unknown): void => writeOut(JSON.stringify(v, null, 2) + '\n');
  const err = stderrLine;
  printPaymentNotes(outcome);
  switch (outcome.type) {
    case 'success':
      return out(outcome.output);
    case 'dry_run':
      err('dry run', outcome.report.verdict);
      return out(full ? outcome.report : dryRunSummary(outcome.report));
    case 'payment_required':
      // A short summary, not the whole challenge (13 options with their extensions): --dry-run shows everything.
      err('not paid', outcome.hint);
      return out(notPaidSummary(outcome.challenge, outcome.hint, outcome.mpp));
    case 'refused':
      return err('error', outcome.error.toBody());
    case 'remote_error':
      return err(`remote answered ${outcome.status}`, outcome.body);
  }
}

/**
 * The call target of `name`: a tool of `tools` (the registry, as the composition root gives it), else one the remotes
 * publish (their MCP tools/list or `/.well-known/x402`, src/agent/catalog.ts, listed through `mcp`); undefined when
 * neither has it.
 */
async function resolveTarget(
  mcp: McpRemotes,
  name: string,
  tools: readonly ToolEndpoint[],
  config: AgentConfig,
  log: Logger,
): Promise<{ target?: CallTarget; known: string[] }> {
  const tool = tools.find((t) => t.name === name);
  if (tool) return { target: targetOf(tool), known: tools.map((t) => t.name) };
  const catalog = await loadCatalog(mcp, remotesOfSettings(config.settings.remote), config.settings.timeoutMs, log);
  const found = catalog.find((t) => t.target.name === name);
  if (!found) await mcp.close();
  return { ...(found ? { target: found.target } : {}), known: catalog.map((t) => t.target.name) };
}

/**
 * Runs `tollbooth call` on one of `tools` (the registry) or of the tools the remote publishes, paying under the
 * ledger `openSpends` opens (both given by the composition root); returns the process exit code.
 */
export async function runCall(
  parsed: CallArgs,
  tools: readonly ToolEndpoint[],
  openSpends: OpenSpends,
): Promise<number> {
  const config = loadAgentConfig({ ...process.env, ...parsed.env });
  // Quiet by default: stderr carries the receipt; LOG_LEVEL=info shows the logs too.
  const log = agentLogger(config, process.env.LOG_LEVEL ? config.logLevel : 'warn');
  const mcp = new McpRemotes();
  const { target, known } = await resolveTarget(mcp, parsed.tool, tools, config, log);
  if (!target) {
    writeErr(`tollbooth call: unknown tool "${parsed.tool}". Tools: ${known.join(', ')}\n`);
    return CALL_EXIT.usage;
  }
  const problems = agentProblems(config, [...tools, target]);
  if (problems.length > 0)
    throw new ConfigError(`Invalid configuration for tollbooth call:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  const agent = await createAgent(config, log, openSpends, mcp);
  try {
    const outcome = await agent.caller.call(target, parsed.input, {
      signal: new AbortController().signal,
      approve: async () => (parsed.yes ? 'accepted' : 'unavailable'),
      ...(parsed.maxUsd !== undefined ? { maxUsdPerCall: parsed.maxUsd } : {}),
      dryRun: parsed.dryRun,
    });
    print(outcome, parsed.full);
    return exitCodeOf(outcome);
  } finally {
    await agent.close();
  }
}
