/**
 * The providers of testnet-fund, wallet-readiness and transfers-evm. They need the chain SDKs (viem, @solana/kit),
 * which load with the first chain-tool call (wiring.ts), not at start-up: most calls never need them.
 */
import type { Config } from '../../config/config.js';
import type { Logger } from '../../shared/log.js';
import { faucetSetup, faucetUnconfigured } from './faucet.js';
import { walletNetworks, type ChainToolProviders } from './types.js';
import type { UpstreamMetrics } from '../upstream.js';

export type { ChainToolProviders, TransfersChain, TransfersProvider } from './types.js';
export { solanaRpcUrl, walletNetworks } from './types.js';

/** The chain-tool providers, wired on the first call that needs one (the same instances serve every later call). */
export function createChainToolProviders(config: Config, log: Logger, metrics?: UpstreamMetrics): ChainToolProviders {
  let wired: Promise<ChainToolProviders> | undefined;
  const wire = () => (wired ??= import('./wiring.js').then((m) => m.wireChainTools(config, log, metrics)));
  const settings = config.chainTools;
  const reads = walletNetworks(config.networks, settings);
  const setup = faucetSetup(settings);
  return {
    faucet: {
      name: setup.hosted ? 'cdp' : 'self-hosted',
      drip: async (request, signal) => (await wire()).faucet.drip(request, signal),
      unconfigured: (network) => faucetUnconfigured(setup, network),
    },
    onramp: {
      configured: settings.cdp.credentials !== undefined,
      link: async (address, signal) => (await wire()).onramp.link(address, signal),
    },
    wallet: {
      stepTimeoutMs: settings.wallet.stepTimeoutMs,
      networks: [...reads.evm, ...reads.svm].map((n) => n.id),
      balances: async (address, solanaAddress, signal) =>
        (await wire()).wallet.balances(address, solanaAddress, signal),
      gas: async (signal) => (await wire()).wallet.gas(signal),
    },
    transfers: {
      source: settings.transfers.indexer ? 'indexer' : 'json-rpc',
      list: async (chain, query, signal) => (await wire()).transfers.list(chain, query, signal),
    },
  };
}
