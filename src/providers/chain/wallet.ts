/**
 * The reads behind wallet-readiness (docs/spec-notes.md#wallet-reads): native and stablecoin balances on every EVM
 * network of the payment table that has an `rpcUrl` (plus Solana when a Solana address is given), and each network's
 * gas price with the fee of one stablecoin transfer. Networks are read in parallel and fail one by one: each entry says
 * `ok` and carries its numbers or its error.
 */
import { evmChainId, type NetworkEntry } from '../../shared/networks.js';
import type { ChainToolsSettings } from './settings.js';
import { solanaRpcUrl, walletNetworks } from './types.js';
import type { EvmReader, EvmRpcProvider } from './evm-rpc.js';
import { createSolanaReader, type SolanaReader } from './solana-rpc.js';
import { formatUnits } from '../../tool/units.js';
import {
  describeFailure,
  type Amount,
  type BalanceRead,
  type GasRead,
  type NetworkRead,
  type WalletProvider,
} from './wallet-report.js';

export {
  describeFailure,
  stablecoinTotal,
  type Amount,
  type BalanceRead,
  type GasRead,
  type NetworkRead,
  type WalletProvider,
} from './wallet-report.js';

/** Gas units of one ERC-20 transfer used for the fee estimate (a USDC transfer takes ~50–65k). */
export const STABLECOIN_TRANSFER_GAS = 65_000n;

/** Native token symbol by EVM chain id (18 decimals on all of them). */
const NATIVE_SYMBOLS: Record<number, string> = {
  8453: 'ETH',
  84532: 'ETH',
  137: 'POL',
  42161: 'ETH',
  143: 'MON',
  43114: 'AVAX',
  1329: 'SEI',
  10: 'ETH',
  4663: 'ETH',
  42220: 'CELO',
};

interface EvmNet {
  id: string;
  label: string;
  native: string;
  asset: string;
  decimals: number;
  reader: EvmReader;
}

interface SolNet {
  id: string;
  label: string;
  mint: string;
  decimals: number;
  reader: SolanaReader;
}

async function settle<T>(net: { id: string; label: string }, work: () => Promise<T>): Promise<NetworkRead<T>> {
  try {
    return { network: net.id, label: net.label, ok: true, ...(await work()) } as NetworkRead<T>;
  } catch (err) {
    return { network: net.id, label: net.label, ok: false, error: describeFailure(err) };
  }
}

const amount = (symbol: string, raw: bigint, decimals: number): Amount => ({
  symbol,
  decimals,
  raw: raw.toString(),
  formatted: formatUnits(raw, decimals),
});

/** The EVM and Solana networks wallet-readiness reads, each with its reader and the symbols it reports. */
function readNetworks(
  networks: readonly NetworkEntry[],
  settings: ChainToolsSettings,
  evm: EvmRpcProvider,
): { evmNets: EvmNet[]; solNets: SolNet[] } {
  const { evm: evmPicked, svm: solPicked } = walletNetworks(networks, settings);
  const evmNets: EvmNet[] = evmPicked.map((n) => {
    const label = n.label ?? n.id;
    return {
      id: n.id,
      label,
      native: NATIVE_SYMBOLS[evmChainId(n.id)] ?? 'native',
      asset: n.asset,
      decimals: n.decimals,
      reader: evm.reader(n.rpcUrl!, `${label} JSON-RPC`),
    };
  });
  const solNets: SolNet[] = solPicked.map((n) => {
    const label = n.label ?? n.id;
    return {
      id: n.id,
      label,
      mint: n.asset,
      decimals: n.decimals,
      reader: createSolanaReader(solanaRpcUrl(n, settings)!, `${label} RPC`, settings.rpc.timeoutMs),
    };
  });
  return { evmNets, solNets };
}

/** The native and stablecoin balances of an address on one EVM network. */
async function evmBalances(net: EvmNet, address: string, signal: AbortSignal) {
  const [native, stable, info] = await Promise.all([
    net.reader.nativeBalance(address, signal),
    net.reader.tokenBalance(net.asset, address, signal),
    net.reader.tokenInfo(net.asset, signal),
  ]);
  return {
    family: 'evm' as const,
    address,
    native: amount(net.native, native, 18),
    stablecoin: { ...amount(info.symbol ?? 'USDC', stable, net.decimals), token: net.asset },
  };
}

/** The SOL and USDC balances of an address on one Solana network. */
async function solanaBalances(net: SolNet, address: string, signal: AbortSignal) {
  const [lamports, token] = await Promise.all([
    net.reader.lamports(address, signal),
    net.reader.tokenBalance(address, net.mint, signal),
  ]);
  return {
    family: 'svm' as const,
    address,
    native: amount('SOL', lamports, 9),
    stablecoin: { ...amount('USDC', token.raw, token.decimals ?? net.decimals), token: net.mint },
  };
}

/** One EVM network's gas price and the fee of one stablecoin transfer at that price. */
async function evmGas(net: EvmNet, signal: AbortSignal) {
  const price = await net.reader.gasPrice(signal);
  return {
    gasPriceWei: price.toString(),
    gasPriceGwei: formatUnits(price, 9),
    stablecoinTransfer: {
      gas: Number(STABLECOIN_TRANSFER_GAS),
      fee: amount(net.native, price * STABLECOIN_TRANSFER_GAS, 18),
    },
  };
}

/** Builds the wallet provider from the payment table and the chain-tool settings. */
export function createWalletProvider(
  networks: readonly NetworkEntry[],
  settings: ChainToolsSettings,
  evm: EvmRpcProvider,
): WalletProvider {
  const { evmNets, solNets } = readNetworks(networks, settings, evm);
  return {
    stepTimeoutMs: settings.wallet.stepTimeoutMs,
    networks: [...evmNets.map((n) => n.id), ...solNets.map((n) => n.id)],
    async balances(address, solanaAddress, signal) {
      const evmReads = evmNets.map((net) => settle(net, () => evmBalances(net, address, signal)));
      const solReads = solanaAddress
        ? solNets.map((net) => settle(net, () => solanaBalances(net, solanaAddress, signal)))
        : [];
      return Promise.all([...evmReads, ...solReads]) as Promise<BalanceRead[]>;
    },
    async gas(signal) {
      return Promise.all(evmNets.map((net) => settle(net, () => evmGas(net, signal)))) as Promise<GasRead[]>;
    },
  };
}
