import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { UsageError, type CliCommand } from './command.js';
import { REMOTE_FLAGS, REMOTE_OPTIONS, REMOTE_USAGE, remoteSettings } from './remote-flags.js';

/** `--max-usd <dollars>`: a per-call cap in dollars (shared with `tollbooth fetch`). */
export const MaxUsd = z
  .string()
  .optional()
  .transform((text, ctx) => {
    const dollars = text === undefined ? undefined : Number(text);
    if (dollars === undefined || (Number.isFinite(dollars) && dollars >= 0)) return dollars;
    ctx.addIssue({ code: 'custom', message: '--max-usd must be a non-negative number of dollars, e.g. 0.05' });
    return z.NEVER;
  });

/** The values of `call`'s options (the `--remote…` ones pass through as they are). */
const CallValues = z.looseObject({
  input: z.string().optional(),
  'max-usd': MaxUsd,
  'dry-run': z.boolean().default(false),
  full: z.boolean().default(false),
  yes: z.boolean().default(false),
});

/** The tool's input of `--input`: JSON as given, or read from the file `@path` names; `undefined` without the flag. */
function readInput(flag: string | undefined): unknown {
  if (flag === undefined) return undefined;
  let text = flag;
  if (flag.startsWith('@')) {
    try {
      text = readFileSync(flag.slice(1), 'utf8');
    } catch (err) {
      throw new UsageError(
        `--input ${flag}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError('--input must be JSON (or @file holding JSON)');
  }
}

/** `tollbooth call <url>`: the same path as `tollbooth fetch` (POST of the `--input` JSON, or GET without it). */
async function callUrl(url: string, values: z.output<typeof CallValues>): Promise<number> {
  if (values.full && !values['dry-run']) throw new UsageError('--full goes with --dry-run');
  const input = readInput(values.input);
  const maxUsd = values['max-usd'];
  const [{ runFetch }, { openStore }] = await Promise.all([
    import('../agent/cli-fetch.js'),
    import('../store/open.js'),
  ]);
  const body = input === undefined ? {} : { body: JSON.stringify(input) };
  return runFetch(
    {
      url: new URL(url).href,
      method: input === undefined ? 'GET' : 'POST',
      headers: input === undefined ? {} : { 'content-type': 'application/json' },
      ...body,
      ...(maxUsd !== undefined ? { maxUsd } : {}),
      dryRun: values['dry-run'],
      full: values.full,
      yes: values.yes,
    },
    openStore,
  );
}

/** `tollbooth call <tool>`: one call of a remote tool for scripts, paid from the user's wallet under the budget. */
export const callCommand: CliCommand<z.output<typeof CallValues>> = {
  usage: `tollbooth call <tool | url> [--input '<json>' | --input @file.json] [--max-usd <dollars>] [--dry-run [--full]] [--yes] --remote <base url>

  Calls one tool of a remote deployment, paying from the configured wallet (WALLET_*) under the budget (BUDGET_*),
  with x402 or MPP (PAYMENT_PROTOCOLS, x402 first by default), with the same store as stdio --remote. A URL instead of a tool is tollbooth fetch (POST of --input, or GET). stdout: the JSON result (or the dry run's report); stderr: the receipt.
  Exit: 0 done, 1 failed (remote error, payment refused or pending), 2 usage, 3 not paid (budget, approval, no wallet).

  --input <json|@file>     the tool's input as JSON, or @path of a file holding it (default {})
  --max-usd <dollars>      per-call cap for this call, instead of BUDGET_MAX_USD_PER_CALL
  --dry-run                show the price and the option that would be paid; pay nothing
  --full                   with --dry-run: the full report (every option and the whole challenge) as JSON
  --yes, -y                approve a payment above BUDGET_ASK_ABOVE_USD without asking
${REMOTE_USAGE}`,
  options: {
    input: { type: 'string' },
    'max-usd': { type: 'string' },
    'dry-run': { type: 'boolean' },
    full: { type: 'boolean' },
    yes: { type: 'boolean', short: 'y' },
    ...REMOTE_OPTIONS,
  },
  positionals: 1,
  values: CallValues,
  async run(args) {
    const tool = args.positionals[0];
    if (!tool) throw new UsageError('name the tool to call');
    if (/^https?:\/\//i.test(tool)) return callUrl(tool, args.values);
    const remote = remoteSettings(args.values);
    if (!Object.values(REMOTE_FLAGS).some((name) => remote[name] || process.env[name] || process.env[`${name}_FILE`]))
      throw new UsageError('name the deployment to call: --remote <base url> (or set REMOTE_URL)');
    if (args.values.full && !args.values['dry-run']) throw new UsageError('--full goes with --dry-run');
    const input = readInput(args.values.input);
    const maxUsd = args.values['max-usd'];
    // The agent's composition root: the agent gets the registry's tools from here.
    const [{ runCall }, { tools }, { openStore }] = await Promise.all([
      import('../agent/cli-call.js'),
      import('../../tools/index.js'),
      import('../store/open.js'),
    ]);
    return runCall(
      {
        tool,
        input,
        ...(maxUsd !== undefined ? { maxUsd } : {}),
        dryRun: args.values['dry-run'],
        full: args.values.full,
        yes: args.values.yes,
        env: remote,
      },
      tools,
      openStore,
    );
  },
};
