/**
 * The Solana facilitator signer of @x402/svm 2.27 made safe against a failing RPC (429, 5xx, garbage, no answer).
 * Its RPC failures are recorded in the call's trace (rpc-trace.ts), so a verification the library refuses because the
 * RPC failed ("simulation failed") is reported as the facilitator being unavailable. A `sendTransaction` whose answer
 * was lost (it may have reached the cluster) answers the transaction's own signature instead of failing: the library
 * then confirms it (settled), reports it failed on chain, or ends in `settlement_pending` with that signature, which
 * reconciliation settles or releases. The library itself calls such a lost answer a plain failure, which the broker
 * answers by releasing the claim while the transfer could still land: charged, nothing delivered, a failed receipt.
 * While such a transaction is being confirmed it is sent again (same signed bytes; the cluster deduplicates by signature).
 * Every library promise is awaited: nothing here can reject unobserved.
 */
import { getBase58Decoder, getBase64Encoder, getTransactionDecoder } from '@solana/kit';
import type { FacilitatorSvmSigner } from '@x402/svm';
import { chainText, connectionRefused, noteRpcFailure, noteSend, rpcErrorText } from '../rpc-trace.js';

/** `@solana/errors` code of an HTTP transport error (its context carries `statusCode`). */
const HTTP_TRANSPORT_ERROR = 8100002;
const SIGNATURE = /^[1-9A-HJ-NP-Za-km-z]{64,88}$/;
const RESEND_INTERVAL_MS = 1000;

/** The `@solana/errors` context of an error, if it is one. */
function solanaContext(err: unknown): { __code?: unknown; statusCode?: unknown } | undefined {
  return (err as { context?: { __code?: unknown; statusCode?: unknown } } | undefined)?.context;
}

/** True when an error is the RPC failing, not an answer about the transaction (a simulation result, an on-chain failure, a preflight refusal). */
export function isSvmOutage(err: unknown): boolean {
  const text = chainText(err);
  if (/Simulation failed|Transaction failed onchain/i.test(text)) return false;
  const code = solanaContext(err)?.__code;
  return code !== -32002; // a send's preflight refusal is an answer
}

/**
 * True when the cluster surely did not take a transaction: it answered a JSON-RPC refusal (other than "already
 * processed"), rate-limited the request (429) or no connection was made. Anything else may have reached it.
 */
export function svmSurelyNotSent(err: unknown): boolean {
  if (/already ?processed/i.test(chainText(err))) return false;
  const context = solanaContext(err);
  if (context?.__code === HTTP_TRANSPORT_ERROR) return context.statusCode === 429;
  if (typeof context?.__code === 'number' && context.__code < 0) return true;
  return connectionRefused(err);
}

/** The transaction id of a base64 wire transaction: its first signature (the fee payer's), base58. */
export function signatureOfWire(wire: string): string | undefined {
  try {
    const tx = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
    const first = Object.values(tx.signatures)[0];
    return first ? getBase58Decoder().decode(first) : undefined;
  } catch {
    return undefined;
  }
}

function traced<A extends unknown[], R>(
  call: ((...args: A) => Promise<R>) | undefined,
): ((...args: A) => Promise<R>) | undefined {
  if (!call) return undefined;
  return async (...args: A) => {
    try {
      return await call(...args);
    } catch (err) {
      if (isSvmOutage(err)) noteRpcFailure(rpcErrorText(err));
      throw err;
    }
  };
}

/** The signer with its RPC failures traced, lost send answers followed by signature, and such sends repeated before confirming. */
export function guardSvmSigner(signer: FacilitatorSvmSigner, limit = 256): FacilitatorSvmSigner {
  const unanswered = new Map<string, string>();
  const remember = (signature: string, wire: string) => {
    unanswered.set(signature, wire);
    while (unanswered.size > limit) unanswered.delete(unanswered.keys().next().value!);
  };
  const optional = {
    simulateTransactionWithInnerInstructions: traced(signer.simulateTransactionWithInnerInstructions?.bind(signer)),
    getConfirmedTransactionInnerInstructions: traced(signer.getConfirmedTransactionInnerInstructions?.bind(signer)),
    getTokenAccountBalance: traced(signer.getTokenAccountBalance?.bind(signer)),
    fetchAddressLookupTables: traced(signer.fetchAddressLookupTables?.bind(signer)),
    getAccountInfo: traced(signer.getAccountInfo?.bind(signer)),
  };
  return {
    ...signer,
    ...Object.fromEntries(Object.entries(optional).filter(([, f]) => f !== undefined)),
    simulateTransaction: traced(signer.simulateTransaction.bind(signer))!,
    async sendTransaction(wire, network) {
      const signature = signatureOfWire(wire);
      try {
        const answer = await signer.sendTransaction(wire, network);
        noteSend();
        if (typeof answer === 'string' && SIGNATURE.test(answer)) return answer;
        if (!signature) return answer;
        remember(signature, wire); // an unreadable answer says nothing about the transaction
        return signature;
      } catch (err) {
        if (isSvmOutage(err)) noteRpcFailure(rpcErrorText(err));
        if (!signature || svmSurelyNotSent(err)) throw err;
        noteSend();
        remember(signature, wire);
        return signature;
      }
    },
    async confirmTransaction(signature, network) {
      const wire = unanswered.get(signature);
      let confirming = true;
      // While confirming, a transaction whose send went unanswered is sent again every second, as Solana clients do
      // until it lands or its blockhash expires. The loop catches every failure: it can never reject.
      const resend = async () => {
        while (wire && confirming) {
          await signer.sendTransaction(wire, network).catch(() => undefined);
          await new Promise((resolve) => setTimeout(resolve, RESEND_INTERVAL_MS).unref());
        }
      };
      void resend();
      try {
        await signer.confirmTransaction(signature, network);
        unanswered.delete(signature);
      } catch (err) {
        if (isSvmOutage(err)) noteRpcFailure(rpcErrorText(err));
        throw err;
      } finally {
        confirming = false;
      }
    },
  } as FacilitatorSvmSigner;
}
