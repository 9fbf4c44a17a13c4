/**
 * The drip providers of testnet-fund behind one interface: the hosted CDP faucet
 * (docs/spec-notes.md#coinbase-developer-platform-keys-and-faucet) or a self-hosted faucet sending from the operator's
 * funded testnet keys (docs/spec-notes.md#self-hosted-faucet), chosen by configuration.
 */
import { ToolError } from '../../errors.js';

/** Test networks testnet-fund drips on. */
export type FaucetNetwork = 'base-sepolia' | 'solana-devnet';
/** Tokens testnet-fund drips. */
export type FaucetToken = 'usdc' | 'eth' | 'sol';

/** One drip to send. */
export interface DripRequest {
  network: FaucetNetwork;
  token: FaucetToken;
  address: string;
}

/** A drip that was sent: its transaction hash (EVM) or signature (Solana) and explorer link. */
export interface Drip {
  transactionHash: string;
  explorer: string;
}

/** Something that can send one drip; throws a ToolError (nothing was sent) when it cannot. */
export interface Faucet {
  /** Short name for logs, e.g. "cdp" or "self-hosted". */
  readonly name: string;
  drip(request: DripRequest, signal: AbortSignal): Promise<Drip>;
}

/** What one drip sends: 1 USDC, 0.0001 ETH, 0.00125 SOL (the hosted faucet's per-request amounts), in base units. */
export const DRIP_AMOUNTS = {
  usdc: { units: 1_000_000n, decimals: 6 },
  eth: { units: 100_000_000_000_000n, decimals: 18 },
  sol: { units: 1_250_000n, decimals: 9 },
} as const satisfies Record<FaucetToken, { units: bigint; decimals: number }>;

/** Block-explorer link of a drip transaction. */
export function explorerUrl(network: FaucetNetwork, transaction: string): string {
  return network === 'base-sepolia'
    ? `https://sepolia.basescan.org/tx/${transaction}`
    : `https://explorer.solana.com/tx/${transaction}?cluster=devnet`;
}

/** A faucet for a network this server cannot drip on (no key configured): refuses after verification. */
export function unavailableFaucet(name: string, reason: string): Faucet {
  return {
    name,
    drip: ({ network }) => {
      throw new ToolError('not_implemented', `This server cannot send test funds on ${network}: ${reason}.`);
    },
  };
}

/** Routes each drip to the faucet serving its network. */
export function faucetByNetwork(faucets: Record<FaucetNetwork, Faucet>): Faucet {
  return {
    name: faucets['base-sepolia'].name,
    drip: (request, signal) => faucets[request.network].drip(request, signal),
  };
}
