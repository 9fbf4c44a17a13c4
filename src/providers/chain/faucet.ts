/**
 * The drip providers of testnet-fund behind one interface: the hosted CDP faucet
 * (docs/spec-notes.md#coinbase-developer-platform-keys-and-faucet) or a self-hosted faucet sending from the operator's
 * funded testnet keys (docs/spec-notes.md#self-hosted-faucet), chosen by configuration.
 */
import { ToolError } from '../../shared/errors.js';
import type { Unconfigured } from '../upstream-types.js';
import type { ChainToolsSettings } from './settings.js';

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

/** The faucet as handlers reach it: it drips, and says before any payment on which network it cannot. */
export interface FaucetProvider extends Faucet {
  /** What the operator has not configured for drips on `network`; undefined when a drip can be sent there. */
  unconfigured(network: FaucetNetwork): Unconfigured | undefined;
}

/** Which faucet the configuration chose and which self-hosted keys it holds (never the keys themselves). */
export interface FaucetSetup {
  /** The hosted CDP faucet serves every network (FAUCET_PROVIDER=cdp, or its default with a CDP key). */
  hosted: boolean;
  /** A CDP API key is configured (the hosted faucet could serve with FAUCET_PROVIDER=cdp). */
  cdpKey: boolean;
  /** Whether the self-hosted faucet holds a funded key for each network. */
  keys: Record<FaucetNetwork, boolean>;
}

/** Which faucet the chain-tool settings chose and which self-hosted keys they hold: where drips can be sent. */
export function faucetSetup(s: ChainToolsSettings): FaucetSetup {
  return {
    hosted: s.faucet.provider === 'cdp' && s.cdp.credentials !== undefined,
    cdpKey: s.cdp.credentials !== undefined,
    keys: { 'base-sepolia': s.faucet.evmKey !== undefined, 'solana-devnet': s.faucet.solanaKey !== undefined },
  };
}

/** The setting of the self-hosted faucet's key on each network. */
const FAUCET_KEY_SETTING = {
  'base-sepolia': 'FAUCET_EVM_PRIVATE_KEY',
  'solana-devnet': 'FAUCET_SOLANA_SECRET_KEY',
} as const satisfies Record<FaucetNetwork, string>;

/** What drips on `network` lack in this setup, naming the settings that provide them; undefined when none is missing. */
export function faucetUnconfigured(setup: FaucetSetup, network: FaucetNetwork): Unconfigured | undefined {
  if (setup.hosted || setup.keys[network]) return undefined;
  const key = FAUCET_KEY_SETTING[network];
  const hosted = setup.cdpKey
    ? { settings: ['FAUCET_PROVIDER'], words: 'FAUCET_PROVIDER=cdp' }
    : { settings: ['CDP_API_KEY_ID', 'CDP_API_KEY_SECRET'], words: 'CDP_API_KEY_ID and CDP_API_KEY_SECRET' };
  return {
    settings: [key, ...hosted.settings],
    message:
      `This server cannot send test funds on ${network}: no faucet is configured for it (the operator sets ${key}, ` +
      `or ${hosted.words} for the hosted faucet).`,
  };
}

/** A faucet for a network this server cannot drip on (nothing configured): refuses with what is missing. */
export function unavailableFaucet(name: string, missing: Unconfigured): Faucet {
  return {
    name,
    drip: () => {
      throw new ToolError('not_implemented', missing.message, { details: { settings: missing.settings } });
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
