/** The settlement keys and their public addresses; the keys themselves are parsed by src/shared/keys.ts. */
import { lazyRequire } from '../../shared/lazy.js';

// Each chain SDK loads only when a key of its family is configured: a server without settlement keys starts without them.
const solana = lazyRequire<typeof import('@solana/kit')>('@solana/kit');
const stellar = lazyRequire<typeof import('@stellar/stellar-sdk')>('@stellar/stellar-sdk');
const algorand = lazyRequire<typeof import('algosdk')>('algosdk');
const viemAccounts = lazyRequire<typeof import('viem/accounts')>('viem/accounts');

/** Settlement keys of the in-process facilitator, one per network family, parsed from configuration. */
export interface SettlementKeys {
  evm?: `0x${string}`;
  /** 64-byte Solana keypair (32-byte seed followed by the public key). */
  svm?: Uint8Array;
  /** Stellar secret seed (`S…`). */
  stellar?: string;
  /** 64-byte Algorand secret key (seed followed by the public key). */
  algorand?: Uint8Array;
}

/** The public addresses of the configured settlement keys (published in `extra` as fee payer / facilitator). */
export function signerAddresses(keys: SettlementKeys): {
  evm?: string;
  svm?: string;
  stellar?: string;
  algorand?: string;
} {
  return {
    ...(keys.evm ? { evm: viemAccounts().privateKeyToAccount(keys.evm).address } : {}),
    ...(keys.svm ? { svm: solana().getBase58Decoder().decode(keys.svm.slice(32)) } : {}),
    ...(keys.stellar ? { stellar: stellar().Keypair.fromSecret(keys.stellar).publicKey() } : {}),
    ...(keys.algorand ? { algorand: algorand().encodeAddress(keys.algorand.slice(32)) } : {}),
  };
}
