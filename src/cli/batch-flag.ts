import type { CommandArgs, CommandOptions } from './command.js';
import { networkSetSettings } from './testnet-flag.js';

/** The `--batch-settlement` option of `serve`, in `parseArgs` form. */
export const BATCH_OPTION: CommandOptions = { 'batch-settlement': { type: 'boolean' } };

/** The help line of `--batch-settlement`. */
export const BATCH_USAGE = `  --batch-settlement  also offer x402 batch-settlement (payment channels) on Base and on the EVM networks whose
                    facilitator lists it (BATCH_SETTLEMENT=on; see docs/batch-settlement.md)`;

/** The setting `--batch-settlement` stands for (it overrides the environment), or nothing when the flag is absent. */
export function batchSettlementSettings(args: CommandArgs): Record<string, string> {
  return args.values['batch-settlement'] === true ? { BATCH_SETTLEMENT: 'on' } : {};
}

/** The settings the switches of `serve` stand for: `--testnet` and `--batch-settlement` (they override the environment). */
export function serveSwitchSettings(args: CommandArgs): Record<string, string> {
  return { ...networkSetSettings(args), ...batchSettlementSettings(args) };
}
