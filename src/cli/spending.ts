import { existsSync } from 'node:fs';
import { z } from 'zod';
import type { SpendingOptions } from '../agent/spending.js';
import type { CliCommand } from './command.js';

const STATES = ['reserved', 'settled', 'pending', 'failed', 'released'] as const;
const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--since`: a date (2026-11-28), a time (2026-11-28T10:00:00Z) or an age (30m, 24h, 7d). */
const since = z
  .string()
  .optional()
  .transform((text, ctx) => {
    if (text === undefined) return undefined;
    const age = /^(\d+)([mhd])$/.exec(text);
    const at = age ? new Date(Date.now() - Number(age[1]) * UNITS[age[2]!]!) : new Date(text);
    if (!Number.isNaN(at.getTime())) return at;
    ctx.addIssue({ code: 'custom', message: '--since must be a date (2026-11-28), a time, or an age (30m, 24h, 7d)' });
    return z.NEVER;
  });

/** The values of `--since`, `--state`, `--tool`, `--limit N` and `--json`. */
const SpendingValues: z.ZodType<SpendingOptions> = z.object({
  since,
  state: z.enum(STATES, { error: `--state must be ${STATES.join(', ')}` }).optional(),
  tool: z.string().optional(),
  limit: z.coerce
    .number()
    .int('--limit must be a whole number')
    .min(1, '--limit must be at least 1')
    .max(1_000_000)
    .default(50),
  json: z.boolean().default(false),
});

/** `tollbooth spending`: the agent's own payments (remote mode, `tollbooth call`) against its daily budget. */
export const spendingCommand: CliCommand<SpendingOptions> = {
  usage: `tollbooth spending [--since <date|time|age>] [--state <s>] [--tool <name>] [--limit N] [--json]

  What this agent paid (stdio --remote and tollbooth call), read from its spending ledger (DATABASE_URL, else
  DATA_DIR): today's counted total (UTC day) against the daily budget (BUDGET_MAX_USD_PER_DAY), then each paid call,
  most recent first, with its state: reserved (being paid), settled, pending (outcome unknown, counted until known),
  failed, or released (never charged; given back to the budget). A settled payment the chain does not confirm
  (AGENT_CHECK_RECEIPTS) is flagged NOT CONFIRMED ON CHAIN; such receipts are asked about again first (at most 20,
  within 10 s), so a settlement that landed late shows as confirmed. The server's own takings are in tollbooth receipts.

  --since <when>    only payments from then on: a date (2026-11-28), a time, or an age (30m, 24h, 7d)
  --state <s>       only reserved, settled, pending, failed or released payments
  --tool <name>     only payments for this tool
  --limit N         how many payments to list (default 50)
  --json            the report as JSON`,
  options: {
    since: { type: 'string' },
    state: { type: 'string' },
    tool: { type: 'string' },
    limit: { type: 'string' },
    json: { type: 'boolean' },
  },
  values: SpendingValues,
  async run(args) {
    const [
      { loadAgentConfig },
      { spendingReport, formatSpending },
      { ReceiptChecks },
      { openStore, storeLocation },
      { agentLogger },
    ] = await Promise.all([
      import('../agent/settings.js'),
      import('../agent/spending.js'),
      import('../agent/receipt-check.js'),
      import('../store/open.js'),
      import('../agent/output.js'),
    ]);
    const config = loadAgentConfig(process.env);
    const location = storeLocation(config.store);
    if (location.kind === 'sqlite' && !existsSync(location.where)) {
      process.stderr.write(
        `No store at ${location.where}: this agent has paid nothing from there. Point DATA_DIR (or DATABASE_URL) at the agent's store.\n`,
      );
      return 1;
    }
    const log = agentLogger(config, 'warn');
    const store = await openStore(config.store, log);
    try {
      // Receipts the chain did not confirm yet are asked about again first (bounded): a late settlement shows.
      const enabled = config.settings.checkReceipts !== false;
      await new ReceiptChecks({ spends: store.spends, networks: config.networks, log, enabled }).recheck();
      const report = await spendingReport(store.spends, config.settings.budget, args.values);
      process.stdout.write(args.values.json ? `${JSON.stringify(report, null, 2)}\n` : formatSpending(report));
      return 0;
    } finally {
      await store.close();
    }
  },
};
