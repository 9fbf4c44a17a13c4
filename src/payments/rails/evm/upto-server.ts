/**
 * The server part of EVM `upto` (Permit2): the official `@x402/evm/upto/server` scheme (which imports viem) and the
 * reading of a payment, without the facilitator scheme (evm/upto.ts adds it).
 */
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { UptoEvmScheme as UptoEvmServerScheme } from '@x402/evm/upto/server';
import type { Identified, RailServer } from '../rail.js';
import { checkExpiry } from '../window.js';

interface Permit2Authorization {
  from: string;
  nonce: bigint;
  deadline: bigint;
}

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const UINT = /^[0-9]{1,78}$/;

/** The Permit2 owner, nonce and deadline of an `upto` payment, or undefined when the payload is not a Permit2 witness transfer. */
export function permit2Authorization(payload: PaymentPayload): Permit2Authorization | undefined {
  const auth = (
    payload.payload as { permit2Authorization?: { from?: unknown; nonce?: unknown; deadline?: unknown } } | undefined
  )?.permit2Authorization;
  const { from, nonce, deadline } = auth ?? {};
  if (typeof from !== 'string' || !HEX_ADDRESS.test(from)) return undefined;
  if (typeof nonce !== 'string' || !UINT.test(nonce) || typeof deadline !== 'string' || !UINT.test(deadline))
    return undefined;
  const n = BigInt(nonce);
  if (n >= 2n ** 256n) return undefined;
  return { from, nonce: n, deadline: BigInt(deadline) };
}

/**
 * Replay key of an upto payment: Permit2 burns each (owner, nonce) pair once, on every token and for every
 * spender, so network + owner + nonce is what the chain itself makes single-use.
 */
export function permit2ReplayKey(requirements: PaymentRequirements, auth: Permit2Authorization): string {
  return ['permit2', requirements.network, auth.from.toLowerCase(), auth.nonce.toString()].join(':');
}

/** Reads an `upto` EVM payment: a Permit2 witness authorization within its window. */
export const evmUptoServer: RailServer = {
  serverScheme: () => new UptoEvmServerScheme(),
  identify(payload, requirements): Identified {
    const auth = permit2Authorization(payload);
    if (!auth)
      return {
        ok: false,
        message: 'The upto EVM payment lacks a Permit2 authorization with `from`, a numeric `nonce` and `deadline`.',
      };
    const tooLong = checkExpiry(auth.deadline, requirements.maxTimeoutSeconds, 'Permit2 `deadline`');
    if (tooLong) return tooLong;
    return { ok: true, replayKey: permit2ReplayKey(requirements, auth), payer: auth.from };
  },
};
