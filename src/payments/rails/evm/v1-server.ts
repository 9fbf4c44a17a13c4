/**
 * The server part of version-1 EVM `exact`: the `@x402/evm/exact/server` scheme under the short network name and the
 * reading of a payment, with the replay key of the v2 `exact` rail on the canonical network (evm/v1.ts adds the
 * facilitator side).
 */
import type { PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { canonicalNetworkId } from '../../reading/match.js';
import { identifyEip3009 } from './exact-server.js';
import type { RailServer } from '../rail.js';

/** A version-1 requirement under its canonical CAIP-2 network (what the chain and the v2 rail know it as). */
export function canonicalV1(requirements: PaymentRequirements): PaymentRequirements {
  return { ...requirements, network: canonicalNetworkId(requirements.network) as PaymentRequirements['network'] };
}

/** Reads a version-1 `exact` EVM payment: a well-formed EIP-3009 authorization within its window. */
export const evmExactV1Server: RailServer = {
  // Registered under the short name only so the resource server can resolve the payment flow of a v1 payment.
  serverScheme: () => new ExactEvmServerScheme(),
  identify: identifyEip3009('The version-1 exact payment', canonicalV1),
};
