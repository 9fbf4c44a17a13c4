import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';

interface Eip3009Payload {
  signature?: unknown;
  authorization?: { from?: unknown; nonce?: unknown };
}

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HEX_NONCE = /^0x[0-9a-fA-F]{64}$/;

/** The EIP-3009 authorization of an `exact` EVM payment, or undefined when the payload is not one. */
export function eip3009Authorization(payload: PaymentPayload): { from: string; nonce: string } | undefined {
  const inner = payload.payload as Eip3009Payload;
  const from = inner.authorization?.from;
  const nonce = inner.authorization?.nonce;
  if (typeof from !== 'string' || typeof nonce !== 'string') return undefined;
  if (!HEX_ADDRESS.test(from) || !HEX_NONCE.test(nonce)) return undefined;
  return { from, nonce };
}

/** Replay key of an EIP-3009 payment: network + asset + payer + nonce, the fields the chain itself makes single-use. */
export function evmExactReplayKey(requirements: PaymentRequirements, auth: { from: string; nonce: string }): string {
  return ['evm-exact', requirements.network, requirements.asset.toLowerCase(), auth.from.toLowerCase(), auth.nonce.toLowerCase()].join(':');
}
