import { z } from 'zod';
import type { ReceiptsOptions } from '../receipts/receipts.js';
import type { CliCommand } from './command.js';

/** The values of `--limit N`, `--status settled|pending|in_doubt|failed`, `--protocol x402|mpp` and `--json`. */
const ReceiptsValues: z.ZodType<ReceiptsOptions> = z.object({
  limit: z.coerce
    .number()
    .int('--limit must be a whole number')
    .min(1, '--limit must be at least 1')
    .max(1_000_000)
    .default(50),
  status: z
    .enum(['settled', 'pending', 'in_doubt', 'failed'], {
      error: '--status must be settled, pending, in_doubt or failed',
    })
    .optional(),
  protocol: z.enum(['x402', 'mpp'], { error: '--protocol must be x402 or mpp' }).optional(),
  json: z.boolean().default(false),
});

/** `tollbooth receipts`: settled, pending, in-doubt and failed payments with totals by network, tool and protocol. */
export const receiptsCommand: CliCommand<ReceiptsOptions> = {
  usage: `tollbooth receipts [--limit N] [--status settled|pending|in_doubt|failed] [--protocol x402|mpp] [--json]

  Settled, pending, in-doubt and failed payments, most recent first, with the protocol each came in (x402 or MPP)
  and totals by network, by tool and by protocol (atomic and decimal units, never summed across networks), read
  from the server's store (DATABASE_URL, else DATA_DIR) and the settlement journal in DATA_DIR. A payment is
  in_doubt, with its age, while its call runs or is being settled, or once settled until its receipt is stored
  (settled_not_stored: the journal holds it with its transaction).

  --limit N         how many payments to list (default 50)
  --status <s>      only settled, pending, in_doubt or failed payments
  --protocol <p>    only payments made with x402 or with mpp
  --json            the report as JSON`,
  options: {
    limit: { type: 'string' },
    status: { type: 'string' },
    protocol: { type: 'string' },
    json: { type: 'boolean' },
  },
  values: ReceiptsValues,
  async run(args) {
    const [{ loadConfig }, { runReceipts }, { networkTable }, { defaultNetworkTable }] = await Promise.all([
      import('../config/config.js'),
      import('../receipts/receipts.js'),
      import('../shared/network-table.js'),
      import('../shared/network-sets.js'),
    ]);
    const config = loadConfig(process.env);
    // Amounts are shown in their asset's units for every network of the table, also one this configuration leaves
    // out (a placeholder pay-to drops its family) and those of the other network set (payments taken before a switch).
    const { networks } = networkTable({ ...process.env, TOLLBOOTH_NETWORK_SET: config.networkSet });
    const known = [...networks, ...defaultNetworkTable('mainnet'), ...defaultNetworkTable('testnet')];
    return runReceipts({ ...config, networks: known }, args.values);
  },
};
