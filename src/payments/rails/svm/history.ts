/**
 * Finding a Solana payment that another fee payer (a remote facilitator) may have landed: its transaction id is that
 * fee payer's signature, which we cannot compute, so the payer's recent history is read and each transaction's
 * message compared with the payment's (the same message is the same transaction).
 */
import {
  getBase64Encoder,
  getTransactionDecoder,
  type Address,
  type GetSignaturesForAddressApi,
  type GetTransactionApi,
  type IsBlockhashValidApi,
  type Rpc,
  type Signature,
} from '@solana/kit';
import type { LookupResult } from '../rail.js';
import type { SvmPaymentTransaction } from './transaction.js';

/** How many of the payer's latest transactions are read at most. */
const HISTORY_LIMIT = 1000;
/** Transactions older than this before the claim are not compared (clock skew between us and the cluster). */
const SKEW_SECONDS = 600;

/** What the payer's history says: the landed transaction, or whether the history read covers the claim's window. */
export type Landed = { type: 'found'; signature: string; failed: boolean } | { type: 'absent'; complete: boolean };

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/** Looks for the payment's message among the payer's transactions since shortly before `claimedAt` (ISO time). */
export async function findInPayerHistory(
  rpc: Rpc<GetSignaturesForAddressApi & GetTransactionApi>,
  payer: string,
  messageBytes: Uint8Array,
  claimedAt?: string,
): Promise<Landed> {
  const claimed = claimedAt ? Date.parse(claimedAt) : NaN;
  const since = Number.isNaN(claimed) ? undefined : Math.floor(claimed / 1000) - SKEW_SECONDS;
  const history = await rpc.getSignaturesForAddress(payer as Address, { limit: HISTORY_LIMIT }).send();
  for (const entry of history) {
    if (since !== undefined && entry.blockTime !== null && Number(entry.blockTime) < since)
      return { type: 'absent', complete: true };
    const tx = await rpc
      .getTransaction(entry.signature as Signature, { encoding: 'base64', maxSupportedTransactionVersion: 0 })
      .send();
    if (!tx) continue;
    const wire = getBase64Encoder().encode(tx.transaction[0]);
    if (sameBytes(new Uint8Array(getTransactionDecoder().decode(wire).messageBytes), messageBytes))
      return { type: 'found', signature: entry.signature, failed: entry.err !== null };
  }
  return { type: 'absent', complete: history.length < HISTORY_LIMIT };
}

/**
 * Reconciliation of a payment whose fee payer is not our key: found in the payer's history → settled (or failed)
 * with its signature; absent while its blockhash is valid → pending; absent after, from a history that reaches back
 * to the claim → it can never land (failed); otherwise in doubt. The blockhash is asked first, so a transaction
 * that lands before the blockhash expires is in the history read after.
 */
export async function lookupOtherFeePayer(
  rpc: Rpc<GetSignaturesForAddressApi & GetTransactionApi & IsBlockhashValidApi>,
  tx: Pick<SvmPaymentTransaction, 'tokenPayer' | 'blockhash' | 'transaction'>,
  claimedAt?: string,
): Promise<LookupResult> {
  const valid = await rpc.isBlockhashValid(tx.blockhash as never, { commitment: 'processed' }).send();
  const messageBytes = Uint8Array.from(tx.transaction.messageBytes);
  const landed = await findInPayerHistory(rpc, tx.tokenPayer, messageBytes, claimedAt);
  if (landed.type === 'found')
    return landed.failed
      ? { type: 'failed', reason: 'transaction_failed' }
      : { type: 'settled', transaction: landed.signature };
  if (valid.value) return { type: 'pending', reason: 'not landed yet, and its blockhash is still valid' };
  if (landed.complete) return { type: 'failed', reason: 'blockhash_expired' };
  return {
    type: 'pending',
    reason: `its fee payer is not our key and the payer's last ${HISTORY_LIMIT} transactions do not reach back to the claim`,
  };
}
