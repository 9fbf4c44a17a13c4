/**
 * The server part of version-1 EVM `exact`: the `@x402/evm/exact/server` scheme under the short network name and the
 * reading of a payment, with the replay key of the v2 `exact` rail on the canonical network (evm/v1.ts adds the
 * facilitator side).
 */
import type { PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { canonicalNetworkId } from '../../reading/match.js';
import { eip3009Authorization, evmExactReplayKey } from './exact-server.js';
import type { Identified, RailServer } from '../rail.js';
import { checkExpiry } from '../window.js';

/** A version-1 requirement under its canonical CAIP-2 network (what the chain and the v2 rail know it as). */
export function canonicalV1(requirements: PaymentRequirements): PaymentRequirements {
  return { ...requirements, network: canonicalNetworkId(requirements.network) as PaymentRequirements['network'] };
}

/** Reads a version-1 `exact` EVM payment: a well-formed EIP-3009 authorization within its window. */
export const evmExactV1Server: RailServer = {
  // Registered under the short name only so the resource server can resolve the payment flow of a v1 payment.
  serverScheme: () => new ExactEvmServerScheme(),
  identify(payload, requirements): Identified {
    const auth = eip3009Authorization(payload);
    if (!auth)
      return {
        ok: false,
        message:
          'The version-1 exact payment is not a well-formed EIP-3009 authorization: it needs `from` and `to` addresses, decimal `value`, `validAfter` and `validBefore`, a 32-byte `nonce` and a hex `signature`.',
      };
    const tooLong = checkExpiry(auth.validBefore, requirements.maxTimeoutSeconds, '`validBefore`');
    if (tooLong) return tooLong;
    return { ok: true, replayKey: evmExactReplayKey(canonicalV1(requirements), auth), payer: auth.from };
  },
};
