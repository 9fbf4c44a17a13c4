/**
 * `tollbooth call <tool> --input '<json>'`: one call of a remote tool for scripts and direct callers, with the same
 * wallets, budget and store as remote mode. The result goes to stdout as JSON; the receipt and messages to stderr.
 */
import { readFileSync } from 'node:fs';
import { ConfigError, loadConfig } from '../config.js';
import { createLogger } from '../log.js';
import { freeTools, tools } from '../../tools/index.js';
import { agentProblems, createAgent } from './agent.js';
import type { CallOutcome } from './outcome.js';
import { targetOf } from './mcp.js';
import { REMOTE_FLAGS } from './stdio.js';

/** Exit codes of `tollbooth call`. */
export const CALL_EXIT = { ok: 0, failed: 1, usage: 2, notPaid: 3 } as const;

/** The usage text of `tollbooth call`. */
export const CALL_USAGE = `tollbooth call <tool> [--input '<json>' | --input @file.json] [--remote <base url>] [--remote-tools|--remote-token|--remote-smm|--remote-transfers <url>]
                [--max-usd <dollars>] [--dry-run] [--yes]
  Calls one tool of a remote deployment, paying from the configured wallet under the budget (same store as stdio --remote).
  stdout: the JSON result (or the dry run's report); stderr: the receipt and messages.
  Exit: 0 done, 1 failed (remote error, payment refused or pending), 2 usage, 3 not paid (budget, approval, no wallet).`;

/** Parsed `tollbooth call` arguments. */
export interface CallArgs {
  tool: string;
  input: unknown;
  maxUsd?: number;
  dryRun: boolean;
  yes: boolean;
  env: Record<string, string>;
}

class UsageError extends Error {}

/** Parses the arguments after `call`; throws a usage error with a reason. */
export function parseCallArgs(args: readonly string[]): CallArgs {
  const out: CallArgs = { tool: '', input: undefined, dryRun: false, yes: false, env: {} };
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    const value = () => {
      const v = inline ?? args[++i];
      if (v === undefined) throw new UsageError(`${flag} needs a value`);
      return v;
    };
    if (flag === '--dry-run') out.dryRun = true;
    else if (flag === '--yes' || flag === '-y') out.yes = true;
    else if (flag === '--input') {
      const raw = value();
      const text = raw.startsWith('@') ? readFileSync(raw.slice(1), 'utf8') : raw;
      try {
        out.input = JSON.parse(text);
      } catch {
        throw new UsageError('--input must be JSON (or @file holding JSON)');
      }
    } else if (flag === '--max-usd') {
      const n = Number(value());
      if (!Number.isFinite(n) || n < 0) throw new UsageError('--max-usd must be a non-negative number of dollars, e.g. 0.05');
      out.maxUsd = n;
    } else if (Object.hasOwn(REMOTE_FLAGS, flag)) out.env[REMOTE_FLAGS[flag]!] = value();
    else if (flag.startsWith('-')) throw new UsageError(`unknown option ${flag}`);
    else if (!out.tool) out.tool = flag;
    else throw new UsageError(`unexpected argument ${flag}`);
  }
  if (!out.tool) throw new UsageError('name the tool to call');
  return out;
}

function exitCodeOf(outcome: CallOutcome): number {
  switch (outcome.type) {
    case 'success':
    case 'dry_run':
      return CALL_EXIT.ok;
    case 'payment_required':
      return CALL_EXIT.notPaid;
    case 'refused':
      return ['budget_exceeded', 'payment_not_approved', 'invalid_input'].includes(outcome.error.code) ? CALL_EXIT.notPaid : CALL_EXIT.failed;
    case 'remote_error':
      return CALL_EXIT.failed;
  }
}

/** Writes an outcome: result or report on stdout, receipt and messages on stderr. */
function print(outcome: CallOutcome): void {
  const out = (v: unknown): void => void process.stdout.write(JSON.stringify(v, null, 2) + '\n');
  const err = (label: string, v: unknown): void => void process.stderr.write(`${label}: ${typeof v === 'string' ? v : JSON.stringify(v)}\n`);
  if ('receipt' in outcome && outcome.receipt) err('receipt', outcome.receipt);
  if ('payment' in outcome && outcome.payment) err('payment', outcome.payment);
  switch (outcome.type) {
    case 'success':
      return out(outcome.output);
    case 'dry_run':
      err('dry run', outcome.report.verdict);
      return out(outcome.report);
    case 'payment_required':
      err('not paid', outcome.hint);
      return out(outcome.challenge);
    case 'refused':
      return err('error', outcome.error.toBody());
    case 'remote_error':
      return err(`remote answered ${outcome.status}`, outcome.body);
  }
}

/** Runs `tollbooth call`; returns the process exit code. */
export async function runCall(args: readonly string[]): Promise<number> {
  let parsed: CallArgs;
  try {
    parsed = parseCallArgs(args);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`tollbooth call: ${e.message}\n\n${CALL_USAGE}\n`);
    return CALL_EXIT.usage;
  }
  const paid = tools.find((t) => t.name === parsed.tool);
  const free = freeTools.find((t) => t.name === parsed.tool);
  if (!paid && !free) {
    process.stderr.write(`tollbooth call: unknown tool "${parsed.tool}". Tools: ${[...tools, ...freeTools].map((t) => t.name).join(', ')}\n`);
    return CALL_EXIT.usage;
  }
  const config = loadConfig({ ...process.env, ...parsed.env });
  const problems = agentProblems(config);
  if (problems.length > 0) throw new ConfigError(`Invalid configuration for tollbooth call:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  // Quiet by default: stderr carries the receipt; LOG_LEVEL=info shows the logs too.
  const log = createLogger(process.env.LOG_LEVEL ? config.logLevel : 'warn');
  const agent = await createAgent(config, log);
  try {
    const outcome = await agent.caller.call(targetOf((paid ?? free)!, paid !== undefined), parsed.input, {
      signal: new AbortController().signal,
      approve: async () => (parsed.yes ? 'accepted' : 'unavailable'),
      ...(parsed.maxUsd !== undefined ? { maxUsdPerCall: parsed.maxUsd } : {}),
      dryRun: parsed.dryRun,
    });
    print(outcome);
    return exitCodeOf(outcome);
  } finally {
    await agent.close();
  }
}
