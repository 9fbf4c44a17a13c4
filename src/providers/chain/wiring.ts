/**
 * Wires the providers of the chain and wallet tools from configuration: EVM readers, the faucet (hosted CDP or
 * self-hosted, per `FAUCET_PROVIDER`), the onramp, the wallet reads and the transfer listing (indexer or log scan).
 * This module loads the chain SDKs (viem, @solana/kit); tools.ts imports it on the first chain-tool call.
 */
import type { Config } from '../../config/config.js';
import type { Logger } from '../../shared/log.js';
import { createCdpFaucet } from './cdp-faucet.js';
import type { ChainToolProviders } from './types.js';
import { createEvmRpcProvider } from './evm-rpc.js';
import { createEvmFaucet } from './evm-faucet.js';
import { faucetByNetwork, faucetSetup, faucetUnconfigured, unavailableFaucet, type Faucet } from './faucet.js';
import { createTransferIndexer } from './indexer.js';
import { createOnrampProvider } from './onramp.js';
import { createSolanaFaucet } from './solana-faucet.js';
import { listTransfers } from './transfers.js';
import { Upstream, type UpstreamMetrics } from '../upstream.js';
import { createWalletProvider } from './wallet.js';

function faucetFrom(config: Config, log: Logger, metrics?: UpstreamMetrics): Faucet {
  const s = config.chainTools;
  if (s.faucet.provider === 'cdp' && s.cdp.credentials)
    return createCdpFaucet(new Upstream(s.cdp.faucet, log, metrics), s.cdp.credentials, log);
  const { timeoutMs, retries } = s.rpc;
  const setup = faucetSetup(s);
  return faucetByNetwork({
    'base-sepolia': s.faucet.evmKey
      ? createEvmFaucet(
          {
            key: s.faucet.evmKey,
            rpcUrl: s.rpcUrls['base-sepolia'],
            usdc: s.faucet.usdc['base-sepolia'],
            timeoutMs,
            retries,
          },
          log,
        )
      : unavailableFaucet('self-hosted', faucetUnconfigured(setup, 'base-sepolia')!),
    'solana-devnet': s.faucet.solanaKey
      ? createSolanaFaucet(
          {
            key: s.faucet.solanaKey,
            rpcUrl: s.rpcUrls['solana-devnet'],
            usdcMint: s.faucet.usdc['solana-devnet'],
            timeoutMs,
          },
          log,
        )
      : unavailableFaucet('self-hosted', faucetUnconfigured(setup, 'solana-devnet')!),
  });
}

/** Builds the chain-tool providers from configuration; their HTTP upstreams report to `metrics`. */
export function wireChainTools(config: Config, log: Logger, metrics?: UpstreamMetrics): ChainToolProviders {
  const s = config.chainTools;
  const evm = createEvmRpcProvider(s.rpc);
  const indexer = s.transfers.indexer
    ? createTransferIndexer(new Upstream(s.transfers.indexer.settings, log, metrics), s.transfers.indexer.apiKey)
    : undefined;
  const scan = { chunkBlocks: s.transfers.chunkBlocks, maxBlocks: s.transfers.maxBlocks };
  const setup = faucetSetup(s);
  return {
    faucet: { ...faucetFrom(config, log, metrics), unconfigured: (network) => faucetUnconfigured(setup, network) },
    onramp: createOnrampProvider(new Upstream(s.cdp.onramp, log, metrics), s.cdp.credentials),
    wallet: createWalletProvider(config.networks, s, evm),
    transfers: {
      source: indexer ? 'indexer' : 'json-rpc',
      // `base` is the only chain; it is read at Base Sepolia on the testnet set (chain-settings).
      list: (_chain, query, signal) =>
        listTransfers({ reader: evm.reader(s.transfers.rpc.url, s.transfers.rpc.label), indexer, scan }, query, signal),
    },
  };
}
