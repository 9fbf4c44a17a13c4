/**
 * The chain SDKs the agent's wallets sign with, each loaded only with a key of its family (src/agent/wallets.ts), and
 * their preloading while remote mode lists the remotes' tools.
 */
import type { WalletKeys } from './settings.js';

/** Each family's SDK modules, by what a key of it loads (`batch`: an EVM key paying batch-settlement too). */
export const SDK = {
  account: () => import('viem/accounts'),
  evm: () =>
    Promise.all([
      import('@x402/evm/exact/client'),
      import('@x402/evm/upto/client'),
      import('@x402/evm/exact/v1/client'),
    ]),
  batch: () => Promise.all([import('viem'), import('@x402/evm'), import('@x402/evm/batch-settlement/client')]),
  svm: () => Promise.all([import('@solana/kit'), import('@x402/svm')]),
  algorand: () => Promise.all([import('algosdk'), import('@x402/avm'), import('@x402/avm/exact/client')]),
  stellar: () => Promise.all([import('@stellar/stellar-sdk'), import('./stellar-payer.js')]),
} as const;

/** The SDKs remote mode's `loadWallets` waits for (the EVM signing schemes load after the start: see wallets.ts). */
function sdksOf(keys: WalletKeys): Array<keyof typeof SDK> {
  const wanted: Array<[keyof typeof SDK, unknown]> = [
    ['account', keys.evm],
    ['svm', keys.svm],
    ['algorand', keys.algorand],
    ['stellar', keys.stellar],
  ];
  return wanted.filter(([, key]) => Boolean(key)).map(([sdk]) => sdk);
}

/**
 * Starts loading the SDKs remote mode's start waits for, without waiting: it does so while it lists the remotes'
 * tools, so that the wallets load from Node's module cache. A failure surfaces in `loadWallets`.
 */
export function preloadWallets(keys: WalletKeys): void {
  for (const sdk of sdksOf(keys)) SDK[sdk]().catch(() => undefined);
}
