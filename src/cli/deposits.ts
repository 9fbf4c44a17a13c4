import { existsSync } from 'node:fs';
import { z } from 'zod';
import type { DepositsArgs } from '../agent/batch-deposits.js';
import { UsageError, type CliCommand } from './command.js';

/** The values of `--refund`, `--refund-idle`, `--idle <minutes>` and `--json`. */
const DepositsValues = z.object({
  refund: z.boolean().default(false),
  'refund-idle': z.boolean().default(false),
  withdraw: z.boolean().default(false),
  idle: z.coerce.number().positive('--idle must be a positive number of minutes').optional(),
  json: z.boolean().default(false),
});

/**
 * `tollbooth deposits`: the agent's batch-settlement channels (the payer's side; `tollbooth receipts` is the
 * server's side), and their cooperative refunds.
 */
export const depositsCommand: CliCommand<z.output<typeof DepositsValues>> = {
  usage: `tollbooth deposits [--refund [<channelId>]] [--refund-idle [--idle <minutes>]] [--withdraw [<channelId>]] [--json]

  The batch-settlement channels this agent paid through (AGENT_BATCH_SETTLEMENT=on), read from its store (DATABASE_URL,
  else DATA_DIR): what was deposited into each escrow channel, what the seller charged by voucher, what is still
  refundable, what the daily budget still counts as committed, what was spent, refunded, and how long it has been idle.

  --refund [<channelId>]  ask the seller for a cooperative refund of every channel with money left (or of one)
  --refund-idle           refund channels unused for AGENT_BATCH_IDLE_REFUND_MINUTES (or --idle)
  --idle <minutes>        with --refund-idle: the idle time instead of AGENT_BATCH_IDLE_REFUND_MINUTES
  --withdraw [<channelId>]  without the seller: start the escrow's timed withdrawal of what each channel (or one)
                          holds unclaimed (a transaction paid in gas by the EVM key); run it again once the channel's
                          withdraw delay has passed to finish it and get the money back
  --json                  the listing (and refunds) as JSON
  Exit: 0 done, 1 a refund or withdrawal failed.`,
  options: {
    refund: { type: 'boolean' },
    'refund-idle': { type: 'boolean' },
    withdraw: { type: 'boolean' },
    idle: { type: 'string' },
    json: { type: 'boolean' },
  },
  positionals: 1,
  values: DepositsValues,
  async run({ values, positionals }) {
    const [{ loadAgentConfig }, { runDeposits }, { openStore, storeLocation }, { agentLogger }] = await Promise.all([
      import('../agent/settings.js'),
      import('../agent/batch-deposits.js'),
      import('../store/open.js'),
      import('../agent/output.js'),
    ]);
    const config = loadAgentConfig(process.env);
    if (values['refund-idle'] && values.idle === undefined && config.settings.batch.idleRefundMinutes === undefined)
      throw new UsageError('--refund-idle needs AGENT_BATCH_IDLE_REFUND_MINUTES or --idle <minutes>');
    const location = storeLocation(config.store);
    if (location.kind === 'sqlite' && !existsSync(location.where)) {
      process.stdout.write(`No store at ${location.where}: this agent has no batch-settlement channels there.\n`);
      return 0;
    }
    const args: DepositsArgs = {
      refund: values.refund,
      refundIdle: values['refund-idle'],
      withdraw: values.withdraw,
      json: values.json,
      ...(values.idle !== undefined ? { idleMinutes: values.idle } : {}),
      ...(positionals[0] ? { channelId: positionals[0] } : {}),
    };
    const { text, code } = await runDeposits(config, args, openStore, agentLogger(config, 'warn'));
    process.stdout.write(text);
    return code;
  },
};
