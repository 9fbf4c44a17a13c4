import { z } from 'zod';
import type { CliCommand } from './command.js';

/** The values of `--json`. */
interface ChannelsOptions {
  json: boolean;
}

const ChannelsValues: z.ZodType<ChannelsOptions> = z.object({ json: z.boolean().default(false) });

/** Output streams of the command (tests pass their own). */
export interface ChannelsIo {
  out: (text: string) => void;
  err: (text: string) => void;
}

const stdio: ChannelsIo = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) };

/** `tollbooth channels`: prints the seller's batch-settlement channels from the store; returns the exit code. */
export async function runChannels(env: NodeJS.ProcessEnv, options: ChannelsOptions, io = stdio): Promise<number> {
  const [{ existsSync }, { loadConfig }, { openStore, storeLocation }, { createLogger }, report, tables] =
    await Promise.all([
      import('node:fs'),
      import('../config/config.js'),
      import('../store/open.js'),
      import('../shared/log.js'),
      import('../payments/batch/channel-report.js'),
      import('../shared/network-sets.js'),
    ]);
  const config = loadConfig(env);
  const location = storeLocation(config);
  if (location.kind === 'sqlite' && !existsSync(location.where)) {
    io.err(`No store at ${location.where}. Point DATA_DIR (or DATABASE_URL) at the server's store.\n`);
    return 1;
  }
  const store = await openStore(config, createLogger('warn'));
  try {
    if (!store.batchUpkeep) throw new Error('this store keeps no batch-settlement channels');
    const known = [
      ...config.networks,
      ...tables.defaultNetworkTable('mainnet'),
      ...tables.defaultNetworkTable('testnet'),
    ];
    const rows = report.channelRows(await store.batchUpkeep.summaries(), known, Date.now());
    io.out(options.json ? `${JSON.stringify({ channels: rows }, null, 2)}\n` : report.formatChannels(rows));
    return 0;
  } finally {
    await store.close();
  }
}

/** `tollbooth channels`: the seller's batch-settlement channels (payer, network, balance, charged, claimed, idle). */
export const channelsCommand: CliCommand<ChannelsOptions> = {
  usage: `tollbooth channels [--json]

  The batch-settlement channels payers opened with this server (BATCH_SETTLEMENT=on), read from its store
  (DATABASE_URL, else DATA_DIR): payer, network, balance in escrow, charged so far, claimed on chain, and how
  long since the last request. Claims, settles and refunds run on their own (BATCH_CLAIM_INTERVAL,
  BATCH_CLAIM_THRESHOLD, BATCH_REFUND_IDLE); \`tollbooth receipts\` lists their transactions.

  --json            the channels as JSON (amounts in token base units, and in decimal units)`,
  options: { json: { type: 'boolean' } },
  values: ChannelsValues,
  run: (args) => runChannels(process.env, args.values),
};
