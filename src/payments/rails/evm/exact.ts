import type { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmFacilitatorScheme } from '@x402/evm/exact/facilitator';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import type { Hex } from 'viem';
import type { Config } from '../../../config.js';
import type { NetworkEntry } from '../../networks.js';
import { evmLookup, guardedEvmScheme } from './chain.js';
import { EVM_EXACT } from '../info.js';
import type { Identified, LoadedRail, LookupResult, PendingSettlement } from '../rail.js';
import { AUTHORIZATION_STATE_ABI } from '../../../shared/evm-abi.js';

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
export function eip3009Authorization(payload: PaymentPayload): { from: string; nonce: string } | undefined {
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
  return { from, nonce };
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

function lookup(pending: PendingSettlement, net: NetworkEntry): Promise<LookupResult> {
  return evmLookup(pending, net, async (client) => {
    const auth = eip3009Authorization(pending.payload);
    if (!auth) return { type: 'failed', reason: 'invalid_payment' };
    // The signature binds recipient and value, so a used nonce means this very transfer to us happened.
    const used = await client.readContract({
      address: pending.requirements.asset as Hex,
      abi: AUTHORIZATION_STATE_ABI,
      functionName: 'authorizationState',
      args: [auth.from as Hex, auth.nonce as Hex],
    });
    if (used) return { type: 'settled', transaction: pending.transaction };
    const validBefore = Number(
      (pending.payload.payload as { authorization?: { validBefore?: string } }).authorization?.validBefore ?? 0,
    );
    return validBefore * 1000 < Date.now()
      ? { type: 'failed', reason: 'authorization_expired_unused' }
      : { type: 'pending' };
  });
}

/** `exact` on EVM with an EIP-3009 `transferWithAuthorization` (the default EVM rail). */
export const evmExactRail: LoadedRail = {
  ...EVM_EXACT,
  serverScheme: () => new ExactEvmServerScheme(),
  identify(payload, requirements): Identified {
    const auth = eip3009Authorization(payload);
    if (!auth)
      return {
        ok: false,
        message:
          'The exact EVM payment is not a well-formed EIP-3009 authorization: it needs `from` and `to` addresses, decimal `value`, `validAfter` and `validBefore`, a 32-byte `nonce` and a hex `signature`.',
      };
    return { ok: true, replayKey: evmExactReplayKey(requirements, auth), payer: auth.from };
  },
  registerInProcess(facilitator: x402Facilitator, nets: readonly NetworkEntry[], config: Config): string[] {
    const key = config.facilitator.keys.evm;
    if (!key) return [];
    const done: string[] = [];
    for (const net of nets) {
      const scheme = guardedEvmScheme(
        net,
        key,
        config.facilitator.settleTimeoutMs,
        (signer) => new ExactEvmFacilitatorScheme(signer),
      );
      if (!scheme) continue;
      facilitator.register(net.id as `${string}:${string}`, scheme);
      done.push(net.id);
    }
    return done;
  },
  lookup,
};
