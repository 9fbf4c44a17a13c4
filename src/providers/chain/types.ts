/**
 * The shapes of the chain-tool providers and the pure network choices they share, apart from their wiring, so the
 * lazily loaded wiring (wiring.ts) and the eager facade (tools.ts) do not import each other.
 */
import { SOLANA_MAINNET, type NetworkEntry } from '../../shared/networks.js';
import { SOLANA_DEVNET, type ChainToolsSettings } from './settings.js';
import type { FaucetProvider } from './faucet.js';
import type { OnrampProvider } from './onramp.js';
import type { TransfersPage, TransfersQuery } from './transfers.js';
import type { WalletProvider } from './wallet-report.js';

/** Chains transfers-evm serves. */
export type TransfersChain = 'base';

/** Lists a wallet's ERC-20 transfers on a chain. */
export interface TransfersProvider {
  /** `indexer` when an indexer key is configured, else `json-rpc`. */
  readonly source: 'indexer' | 'json-rpc';
  list(chain: TransfersChain, query: TransfersQuery, signal: AbortSignal): Promise<TransfersPage>;
}

/** The providers of testnet-fund, wallet-readiness and transfers-evm. */
export interface ChainToolProviders {
  faucet: FaucetProvider;
  onramp: OnrampProvider;
  wallet: WalletProvider;
  transfers: TransfersProvider;
}

/** The Solana RPC URL wallet-readiness reads a network at: its own, else the configured mainnet or devnet URL. */
export function solanaRpcUrl(n: NetworkEntry, settings: ChainToolsSettings): string | undefined {
  return (
    n.rpcUrl ??
    (n.id === SOLANA_MAINNET
      ? settings.rpcUrls.solana
      : n.id === SOLANA_DEVNET
        ? settings.rpcUrls['solana-devnet']
        : undefined)
  );
}

/** The networks wallet-readiness reads: WALLET_READINESS_NETWORKS or every entry, EVM ones with an RPC URL, Solana ones with one. */
export function walletNetworks(
  networks: readonly NetworkEntry[],
  settings: ChainToolsSettings,
): { evm: NetworkEntry[]; svm: NetworkEntry[] } {
  const wanted = settings.wallet.networks;
  const picked = networks.filter((n) => (wanted ? wanted.includes(n.id) : true));
  return {
    evm: picked.filter((n) => n.family === 'evm' && n.rpcUrl),
    svm: picked.filter((n) => n.family === 'svm' && solanaRpcUrl(n, settings)),
  };
}
