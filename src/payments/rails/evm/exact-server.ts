/**
 * The server part of EVM `exact` (EIP-3009): the official `@x402/evm/exact/server` scheme and the reading of a payment,
 * without viem or the facilitator scheme (evm/exact.ts adds those).
 */
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import type { Identified, RailServer } from '../rail.js';
import { checkExpiry } from '../window.js';

interface Eip3009Payload {
  signature?: unknown;
  authorization?: {
    from?: unknown;
    to?: unknown;
    value?: unknown;
    validAfter?: unknown;
    validBefore?: unknown;
    nonce?: unknown;
  };
}

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HEX_NONCE = /^0x[0-9a-fA-F]{64}$/;
const HEX_BYTES = /^0x(?:[0-9a-fA-F]{2})+$/;
/** A uint256 as x402 writes it: a decimal string (a safe integer number is tolerated). */
const isUint = (v: unknown) =>
  typeof v === 'string' ? /^\d{1,78}$/.test(v) : Number.isSafeInteger(v) && (v as number) >= 0;

/**
 * The EIP-3009 authorization of an `exact` EVM payment, or undefined when the payload is not a well-formed one (so a
 * malformed field is refused as such, before the facilitator would choke on it).
 */
export function eip3009Authorization(
  payload: PaymentPayload,
): { from: string; nonce: string; validBefore: string } | undefined {
  const inner = (payload.payload ?? {}) as Eip3009Payload;
  const auth = inner.authorization;
  const from = auth?.from;
  const nonce = auth?.nonce;
  if (typeof from !== 'string' || typeof nonce !== 'string') return undefined;
  if (!HEX_ADDRESS.test(from) || !HEX_NONCE.test(nonce)) return undefined;
  if (
    typeof auth?.to !== 'string' ||
    !HEX_ADDRESS.test(auth.to) ||
    !isUint(auth.value) ||
    !isUint(auth.validAfter) ||
    !isUint(auth.validBefore)
  )
    return undefined;
  if (typeof inner.signature !== 'string' || !HEX_BYTES.test(inner.signature)) return undefined;
  return { from, nonce, validBefore: String(auth.validBefore) };
}

/** Replay key of an EIP-3009 payment: network + asset + payer + nonce, the fields the chain itself makes single-use. */
export function evmExactReplayKey(requirements: PaymentRequirements, auth: { from: string; nonce: string }): string {
  return [
    'evm-exact',
    requirements.network,
    requirements.asset.toLowerCase(),
    auth.from.toLowerCase(),
    auth.nonce.toLowerCase(),
  ].join(':');
}

/**
 * Identifies an EIP-3009 `exact` payment (`what` names it in the refusal): well formed, within its window, its replay
 * key taken under the requirements `keyed` gives (a version-1 entry's canonical network).
 */
export function identifyEip3009(
  what: string,
  keyed: (requirements: PaymentRequirements) => PaymentRequirements = (r) => r,
): RailServer['identify'] {
  return (payload, requirements): Identified => {
    const auth = eip3009Authorization(payload);
    if (!auth)
      return {
        ok: false,
        message: `${what} is not a well-formed EIP-3009 authorization: it needs \`from\` and \`to\` addresses, decimal \`value\`, \`validAfter\` and \`validBefore\`, a 32-byte \`nonce\` and a hex \`signature\`.`,
      };
    const tooLong = checkExpiry(auth.validBefore, requirements.maxTimeoutSeconds, '`validBefore`');
    if (tooLong) return tooLong;
    return { ok: true, replayKey: evmExactReplayKey(keyed(requirements), auth), payer: auth.from };
  };
}

/** Reads an `exact` EVM payment: a well-formed EIP-3009 authorization within its window. */
export const evmExactServer: RailServer = {
  serverScheme: () => new ExactEvmServerScheme(),
  identify: identifyEip3009('The exact EVM payment'),
};
