/**
 * The server part of Stellar `exact` (see stellar/rail.ts): our server scheme and the reading of a payment (the payer's
 * address and authorization nonce as the replay key, its expiration checked against the current ledger), without
 * the facilitator side.
 */
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { decodeStellarTransfer, payerAuthorization, type PayerAuthorization } from './checks.js';
import { stellarPassphrase } from './network.js';
import { ExactStellarServerScheme } from './server.js';
import { checkStellarWindow } from './window.js';
import type { Identified, RailServer } from '../rail.js';

/** The payer's authorization in a Stellar `exact` payload, or a sentence saying why there is none. */
export function stellarPayerAuthorization(
  payload: PaymentPayload,
  network: string,
): { ok: true; auth: PayerAuthorization } | { ok: false; message: string } {
  const passphrase = stellarPassphrase(network);
  if (!passphrase)
    return {
      ok: false,
      message: `${network} is not a Stellar network this server knows (stellar:pubnet, stellar:testnet).`,
    };
  const decoded = decodeStellarTransfer(payload, passphrase);
  if (!decoded.ok) return { ok: false, message: decoded.message };
  const auth = payerAuthorization(decoded.transfer);
  if (!auth)
    return {
      ok: false,
      message:
        'The Stellar payment carries no authorization entry with address credentials of the transfer’s `from`; sign the payer’s entry.',
    };
  return { ok: true, auth };
}

/** Replay key of a Stellar `exact` payment: network + payer address + authorization nonce (the chain's nonce entry). */
export function stellarExactReplayKey(network: string, auth: Pick<PayerAuthorization, 'address' | 'nonce'>): string {
  return ['stellar-exact', network, auth.address, auth.nonce].join(':');
}

/** Reads a Stellar `exact` payment: the payer's signed authorization entry of a SEP-41 transfer, within its window. */
export const stellarExactServer: RailServer = {
  serverScheme: (net) => new ExactStellarServerScheme(net),
  identify(payload: PaymentPayload, requirements: PaymentRequirements): Identified {
    const found = stellarPayerAuthorization(payload, requirements.network);
    if (!found.ok) return { ok: false, message: found.message };
    return { ok: true, replayKey: stellarExactReplayKey(requirements.network, found.auth), payer: found.auth.address };
  },
  async checkWindow(payload, requirements, net, config) {
    const found = stellarPayerAuthorization(payload, requirements.network);
    return found.ok ? checkStellarWindow(found.auth, requirements, net, config) : undefined;
  },
};
