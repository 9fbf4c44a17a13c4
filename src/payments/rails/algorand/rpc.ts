/**
 * The Algorand facilitator signer of @x402/avm 2.26 made safe against a failing algod (429, 5xx, garbage, no answer).
 * A failed request is recorded in the call's trace (rpc-trace.ts): the official scheme reports a simulation that could
 * not run as `invalid_exact_avm_simulation_failed`, which the checked facilitator then reports as the facilitator being
 * unavailable instead. A group whose submission went unanswered is remembered (bounded, by each member's txid), so
 * it can be submitted again when its settlement is checked later: algod identifies a group by its txids,
 * so the same signed bytes can never be applied twice, and a group that never arrived gets its chance. Every library
 * promise is awaited: nothing here can reject unobserved.
 */
import type { FacilitatorAvmSigner } from '@x402/avm';
import algosdk from 'algosdk';
import { noteRpcFailure, noteSend, rpcErrorText } from '../rpc-trace.js';

/** The guarded signer and a way to submit a remembered group again. */
export interface GuardedAvmSigner {
  signer: FacilitatorAvmSigner;
  /** Submits again the signed group that carried `txid` if its submission went unanswered; its outcome is ignored. */
  resend(txid: string): Promise<void>;
}

function txidsOf(group: readonly Uint8Array[]): string[] {
  try {
    return group.map((bytes) => algosdk.decodeSignedTransaction(bytes).txn.txID());
  } catch {
    return [];
  }
}

/** Wraps the official facilitator signer: traced algod failures, submitted groups remembered for a later re-submission. */
export function guardAvmSigner(signer: FacilitatorAvmSigner, limit = 256): GuardedAvmSigner {
  const groups = new Map<
    string,
    { group: Uint8Array[]; network: Parameters<FacilitatorAvmSigner['sendTransactions']>[1] }
  >();
  const traced =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await call(...args);
      } catch (err) {
        noteRpcFailure(rpcErrorText(err));
        throw err;
      }
    };
  const guarded: FacilitatorAvmSigner = {
    ...signer,
    simulateTransactions: traced(signer.simulateTransactions.bind(signer)),
    waitForConfirmation: traced(signer.waitForConfirmation.bind(signer)),
    sendTransactions: async (signedTxns, network) => {
      noteSend();
      const txids = txidsOf(signedTxns);
      // Unanswered (an error, or an answer that names none of the group's txids): algod may or may not hold the
      // group. Kept for a later re-submission of the same bytes.
      const remember = () => {
        for (const id of txids) groups.set(id, { group: signedTxns, network });
        while (groups.size > limit) groups.delete(groups.keys().next().value!);
      };
      try {
        const txid = await signer.sendTransactions(signedTxns, network);
        if (txids.includes(txid)) for (const id of txids) groups.delete(id);
        else remember();
        return txid;
      } catch (err) {
        remember();
        noteRpcFailure(rpcErrorText(err));
        throw err;
      }
    },
  };
  return {
    signer: guarded,
    resend: async (txid) => {
      const sent = groups.get(txid);
      if (sent) await signer.sendTransactions(sent.group, sent.network).catch(() => undefined);
    },
  };
}
