/**
 * What wallet-readiness reports, without the chain SDKs: the shapes of its per-network reads, how a failed read is
 * described, and the stablecoin total. The reads themselves (wallet.ts) load viem and @solana/kit on first use.
 */
import { toToolError } from '../../shared/errors.js';
import { formatUnits } from '../../tool/units.js';

/** An amount in base units and as a decimal string. */
export interface Amount {
  symbol: string;
  decimals: number;
  raw: string;
  formatted: string;
}

/** A network's entry in a step result: its numbers when `ok`, else the error. */
export type NetworkRead<T> =
  | ({ network: string; label: string; ok: true } & T)
  | { network: string; label: string; ok: false; error: { code: string; message: string } };

/** Balances of one wallet on one network. */
export type BalanceRead = NetworkRead<{
  family: 'evm' | 'svm';
  address: string;
  native: Amount;
  stablecoin: Amount & { token: string };
}>;

/** Gas price of one network and the fee of one stablecoin transfer at that price. */
export type GasRead = NetworkRead<{
  gasPriceWei: string;
  gasPriceGwei: string;
  stablecoinTransfer: { gas: number; fee: Amount };
}>;

/** The wallet reads across the configured networks. */
export interface WalletProvider {
  /** Time limit of each wallet-readiness step. */
  readonly stepTimeoutMs: number;
  /** CAIP-2 ids read (EVM first, then Solana). */
  readonly networks: string[];
  balances(address: string, solanaAddress: string | undefined, signal: AbortSignal): Promise<BalanceRead[]>;
  gas(signal: AbortSignal): Promise<GasRead[]>;
}

/**
 * A failure as a step or network entry reports it: the error code and its message (providers say only what went
 * wrong; the charge sentence is the paid pipeline's, added to the call's own error only).
 */
export function describeFailure(err: unknown): { code: string; message: string } {
  const e = toToolError(err);
  return { code: e.code, message: e.message };
}

/** Sum of the stablecoin balances that were read, in dollars (every stablecoin here is a USD coin), as a decimal string. */
export function stablecoinTotal(reads: BalanceRead[]): string {
  let scaled = 0n;
  for (const r of reads) {
    if (r.ok) scaled += BigInt(r.stablecoin.raw) * 10n ** BigInt(Math.max(0, 18 - r.stablecoin.decimals));
  }
  return formatUnits(scaled, 18);
}
