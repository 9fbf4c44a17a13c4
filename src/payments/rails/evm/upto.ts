/**
 * EVM `upto` with a Permit2 witness authorization (docs/payments.md#evm-upto-permit2-on-base), on the official
 * `UptoEvmScheme` server and facilitator of @x402/evm (no shim): the facilitator checks spender = the x402 upto proxy,
 * witness `to` = our pay-to, witness `facilitator` = one of our settling addresses (published as
 * `extra.facilitatorAddress`), deadline, amount, token, the payer's signature, and simulates the proxy's `settle`; a
 * payer who never approved Permit2 is answered `permit2_allowance_required` (HTTP 412). We settle the endpoint's price,
 * which is the advertised `amount` and so never above the signed maximum.
 */
import type { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { UptoEvmScheme as UptoEvmFacilitatorScheme } from '@x402/evm/upto/facilitator';
import { UptoEvmScheme as UptoEvmServerScheme } from '@x402/evm/upto/server';
import type { NetworkEntry } from '../../../shared/networks.js';
import { guardedEvmScheme } from './chain.js';
import { lookupPermit2 } from './upto-lookup.js';
import { EVM_UPTO } from '../info.js';
import type { Identified, LoadedRail, InProcessSettings } from '../rail.js';
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

/** `upto` on EVM with a Permit2 witness transfer through the x402 upto proxy. */
export const evmUptoRail: LoadedRail = {
  ...EVM_UPTO,
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
  registerInProcess(facilitator: x402Facilitator, nets: readonly NetworkEntry[], config: InProcessSettings): string[] {
    const key = config.facilitator.keys.evm;
    if (!key) return [];
    const done: string[] = [];
    for (const net of nets.filter((n) => n.schemes.includes('upto'))) {
      const scheme = guardedEvmScheme(
        net,
        key,
        config.facilitator.settleTimeoutMs,
        (signer) => new UptoEvmFacilitatorScheme(signer),
      );
      if (!scheme) continue;
      facilitator.register(net.id as `${string}:${string}`, scheme);
      done.push(net.id);
    }
    return done;
  },
  lookup: lookupPermit2,
};
