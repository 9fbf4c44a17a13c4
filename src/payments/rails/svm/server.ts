/**
 * The server part of Solana `exact` (see svm/rail.ts): the official `@x402/svm` server scheme and the reading of a
 * payment (the hash of its message as the replay key, durable nonces refused), without the facilitator side.
 */
import { ExactSvmScheme as ExactSvmServerScheme } from '@x402/svm/exact/server';
import type { Identified, RailServer } from '../rail.js';
import { decodeSvmPayment, usesDurableNonce } from './transaction.js';
import { windowRefusal } from '../window.js';

/** Replay key of a Solana payment: network + SHA-256 of the transaction message every signer committed to. */
export function svmExactReplayKey(network: string, messageHash: string): string {
  return ['svm-exact', network, messageHash].join(':');
}

/** Reads a Solana `exact` payment: a decodable, partially signed SPL transfer with a blockhash. */
export const svmExactServer: RailServer = {
  serverScheme: () => new ExactSvmServerScheme(),
  identify(payload, requirements): Identified {
    const tx = decodeSvmPayment(payload);
    if (!tx)
      return {
        ok: false,
        message:
          'The Solana payment must carry `payload.transaction`: a base64 serialized, partially signed transaction.',
      };
    if (!tx.tokenPayer)
      return {
        ok: false,
        message:
          'The Solana payment transaction has no SPL token TransferChecked instruction; sign the transfer with an x402 Solana client.',
      };
    // A blockhash expires by itself (~60–90 s, within any window); a durable nonce never does.
    if (usesDurableNonce(tx))
      return windowRefusal(
        'durable nonce (`AdvanceNonceAccount`, no blockhash expiry)',
        requirements.maxTimeoutSeconds,
      );
    return { ok: true, replayKey: svmExactReplayKey(requirements.network, tx.messageHash), payer: tx.tokenPayer };
  },
};
