import { readFileSync } from 'node:fs';
import { stringOption, UsageError, type CliCommand } from './command.js';
import { REMOTE_OPTIONS, REMOTE_USAGE, remoteSettings } from './remote-flags.js';

/** `tollbooth call <tool>`: one call of a remote tool for scripts, paid from the user's wallet under the budget. */
export const callCommand: CliCommand = {
  usage: `tollbooth call <tool> [--input '<json>' | --input @file.json] [--max-usd <dollars>] [--dry-run] [--yes] [--remote <base url>]

  Calls one tool of a remote deployment, paying from the configured wallet (WALLET_*) under the budget (BUDGET_*),
  with x402 or MPP (PAYMENT_PROTOCOLS, x402 first by default), with the same store as stdio --remote. stdout: the JSON result (or the dry run's report); stderr: the receipt.
  Exit: 0 done, 1 failed (remote error, payment refused or pending), 2 usage, 3 not paid (budget, approval, no wallet).

  --input <json|@file>     the tool's input as JSON, or @path of a file holding it (default {})
  --max-usd <dollars>      per-call cap for this call, instead of BUDGET_MAX_USD_PER_CALL
  --dry-run                show the price and the option that would be paid; pay nothing
  --yes, -y                approve a payment above BUDGET_ASK_ABOVE_USD without asking
${REMOTE_USAGE}`,
  options: {
    input: { type: 'string' },
    'max-usd': { type: 'string' },
    'dry-run': { type: 'boolean' },
    yes: { type: 'boolean', short: 'y' },
    ...REMOTE_OPTIONS,
  },
  positionals: 1,
  async run(args) {
    const tool = args.positionals[0];
    if (!tool) throw new UsageError('name the tool to call');
    const rawInput = stringOption(args, 'input');
    let input: unknown;
    if (rawInput !== undefined) {
      let text = rawInput;
      if (rawInput.startsWith('@')) {
        try {
          text = readFileSync(rawInput.slice(1), 'utf8');
        } catch (err) {
          throw new UsageError(
            `--input ${rawInput}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
          );
        }
      }
      try {
        input = JSON.parse(text);
      } catch {
        throw new UsageError('--input must be JSON (or @file holding JSON)');
      }
    }
    const maxUsdText = stringOption(args, 'max-usd');
    const maxUsd = maxUsdText === undefined ? undefined : Number(maxUsdText);
    if (maxUsd !== undefined && (!Number.isFinite(maxUsd) || maxUsd < 0))
      throw new UsageError('--max-usd must be a non-negative number of dollars, e.g. 0.05');
    const { runCall } = await import('../client/cli-call.js');
    return runCall({
      tool,
      input,
      ...(maxUsd !== undefined ? { maxUsd } : {}),
      dryRun: args.values['dry-run'] === true,
      yes: args.values.yes === true,
      env: remoteSettings(args),
    });
  },
};
