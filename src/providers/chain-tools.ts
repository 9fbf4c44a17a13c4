/**
 * The providers of testnet-fund, wallet-readiness and transfers-evm. They need the chain SDKs (viem, @solana/kit),
 * which load with the first chain-tool call (chain-wiring.ts), not at start-up: most calls never need them.
 */
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { SOLANA_MAINNET, type NetworkEntry } from '../payments/networks.js';
import { SOLANA_DEVNET, type ChainToolsSettings } from './chain-settings.js';
import type { Faucet } from './faucet.js';
import type { OnrampProvider } from './onramp.js';
import type { TransfersPage, TransfersQuery } from './transfers.js';
import type { UpstreamMetrics } from './upstream.js';
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
  faucet: Faucet;
  onramp: OnrampProvider;
  wallet: WalletProvider;
  transfers: TransfersProvider;
}

/** The Solana RPC URL wallet-readiness reads a network at: its own, else the configured mainnet or devnet URL. */
export function solanaRpcUrl(n: NetworkEntry, settings: ChainToolsSettings): string | undefined {
  return n.rpcUrl ?? (n.id === SOLANA_MAINNET ? settings.rpcUrls.solana : n.id === SOLANA_DEVNET ? settings.rpcUrls['solana-devnet'] : undefined);
}

/** The networks wallet-readiness reads: WALLET_READINESS_NETWORKS or every entry, EVM ones with an RPC URL, Solana ones with one. */
export function walletNetworks(networks: readonly NetworkEntry[], settings: ChainToolsSettings): { evm: NetworkEntry[]; svm: NetworkEntry[] } {
  const wanted = settings.wallet.networks;
  const picked = networks.filter((n) => (wanted ? wanted.includes(n.id) : true));
  return { evm: picked.filter((n) => n.family === 'evm' && n.rpcUrl), svm: picked.filter((n) => n.family === 'svm' && solanaRpcUrl(n, settings)) };
}

/** The chain-tool providers, wired on the first call that needs one (the same instances serve every later call). */
export function createChainToolProviders(config: Config, log: Logger, metrics?: UpstreamMetrics): ChainToolProviders {
  let wired: Promise<ChainToolProviders> | undefined;
  const wire = () => (wired ??= import('./chain-wiring.js').then((m) => m.wireChainTools(config, log, metrics)));
  const settings = config.chainTools;
  const reads = walletNetworks(config.networks, settings);
  return {
    faucet: {
      name: settings.faucet.provider === 'cdp' && settings.cdp.credentials ? 'cdp' : 'self-hosted',
      drip: async (request, signal) => (await wire()).faucet.drip(request, signal),
    },
    onramp: {
      configured: settings.cdp.credentials !== undefined,
      link: async (address, signal) => (await wire()).onramp.link(address, signal),
    },
    wallet: {
      stepTimeoutMs: settings.wallet.stepTimeoutMs,
      networks: [...reads.evm, ...reads.svm].map((n) => n.id),
      balances: async (address, solanaAddress, signal) => (await wire()).wallet.balances(address, solanaAddress, signal),
      gas: async (signal) => (await wire()).wallet.gas(signal),
    },
    transfers: {
      source: settings.transfers.indexer ? 'indexer' : 'json-rpc',
      list: async (chain, query, signal) => (await wire()).transfers.list(chain, query, signal),
    },
  };
}
