import type { CommandArgs, CommandOptions } from './command.js';

/** The `--testnet` option of `serve` and `stdio`, in `parseArgs` form. */
export const TESTNET_OPTION: CommandOptions = { testnet: { type: 'boolean' } };

/** The help line of `--testnet`. */
export const TESTNET_USAGE = `  --testnet         advertise the testnet twins of the default networks (Base Sepolia, Solana devnet, Stellar
                    testnet and Algorand testnet USDC), settled on Base Sepolia and Solana devnet by the public
                    x402.org facilitator once PAY_TO_EVM / PAY_TO_SOLANA are set (TOLLBOOTH_NETWORK_SET=testnet;
                    mainnet is the default); see docs/testnet.md`;

/** The setting `--testnet` stands for (it overrides the environment), or nothing when the flag is absent. */
export function networkSetSettings(args: CommandArgs): Record<string, string> {
  return args.values.testnet === true ? { TOLLBOOTH_NETWORK_SET: 'testnet' } : {};
}
