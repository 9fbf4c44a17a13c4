// algod's validation rules the look-alike Algorand ledger applies: sizes, minimum balances, signatures, group ids.
import { createPublicKey, verify } from 'node:crypto';
import algosdk from 'algosdk';

/** What the look-alike ledger keeps per account: µAlgo, ASA holdings (opted in = present) and a rekey target. */
export interface LedgerAccount {
  algo: bigint;
  assets: Map<bigint, bigint>;
  authAddr?: string;
}

const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
/** algod's largest transaction group. */
export const MAX_GROUP_SIZE = 16;
/** algod's longest validity window, in rounds. */
export const MAX_TXN_LIFE = 1000n;
/** The minimum balance of an account, in µAlgo, plus this much per ASA it holds. */
export const BASE_MIN_BALANCE = 100_000n;
/** The minimum balance each held ASA adds, in µAlgo. */
export const ASSET_MIN_BALANCE = 100_000n;

/** True when `signature` is a valid ed25519 signature of `message` by `publicKey`. */
export function ed25519Valid(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}

/** A copy of the accounts that a group can change without touching the originals. */
export function cloneAccounts(accounts: Map<string, LedgerAccount>): Map<string, LedgerAccount> {
  const out = new Map<string, LedgerAccount>();
  for (const [addr, a] of accounts) out.set(addr, { ...a, assets: new Map(a.assets) });
  return out;
}

/** Bytes as base64 (empty for none), for comparing and showing hashes. */
export const b64 = (bytes: Uint8Array | undefined) => (bytes ? Buffer.from(bytes).toString('base64') : '');

/** The group id algod expects for transactions: the hash of their txids computed with the group field cleared. */
export function expectedGroupId(txns: readonly algosdk.Transaction[]): Uint8Array {
  return algosdk.computeGroupID(
    txns.map((t) => {
      const copy = algosdk.decodeUnsignedTransaction(algosdk.encodeUnsignedTransaction(t));
      copy.group = undefined;
      return copy;
    }),
  );
}
