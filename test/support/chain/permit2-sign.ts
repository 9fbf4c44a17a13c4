import { x402Client } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { uptoPermit2WitnessTypes } from '@x402/evm';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { getAddress, type Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { PERMIT2 } from './permit2.js';

/** The Permit2 witness authorization inside an `upto` payload (strings, as on the wire). */
export interface UptoAuthorization {
  from: string;
  permitted: { token: string; amount: string };
  spender: string;
  nonce: string;
  deadline: string;
  witness: { to: string; facilitator: string; validAfter: string };
}

/** A payment for the challenge's `upto` entry on `network`, created by the official x402 client and `UptoEvmScheme`. */
export async function officialUptoPayment(
  account: PrivateKeyAccount,
  challenge: PaymentRequired,
  network: string,
): Promise<PaymentPayload> {
  const client = new x402Client((_v, reqs) => {
    const entry = reqs.find((r) => r.scheme === 'upto' && r.network === network);
    if (!entry) throw new Error(`no upto entry on ${network}`);
    return entry;
  });
  client.register('eip155:*', new UptoEvmScheme(account));
  return client.createPaymentPayload(challenge);
}

/** The authorization of an `upto` payload. */
export function uptoAuthorization(payload: PaymentPayload): UptoAuthorization {
  return (payload.payload as { permit2Authorization: UptoAuthorization }).permit2Authorization;
}

/**
 * A copy of an official `upto` payment whose authorization was changed and then signed again by `signer` with the
 * same EIP-712 types the official client uses: the only defect is the change (for tamper tests).
 */
export async function resignUpto(
  signer: PrivateKeyAccount,
  payment: PaymentPayload,
  change: (auth: UptoAuthorization) => void,
  chainId = 8453,
): Promise<PaymentPayload> {
  const auth = structuredClone(uptoAuthorization(payment));
  change(auth);
  const signature = await signer.signTypedData({
    domain: { name: 'Permit2', chainId, verifyingContract: PERMIT2 },
    types: uptoPermit2WitnessTypes,
    primaryType: 'PermitWitnessTransferFrom',
    message: {
      permitted: { token: getAddress(auth.permitted.token), amount: BigInt(auth.permitted.amount) },
      spender: getAddress(auth.spender),
      nonce: BigInt(auth.nonce),
      deadline: BigInt(auth.deadline),
      witness: {
        to: getAddress(auth.witness.to),
        facilitator: getAddress(auth.witness.facilitator),
        validAfter: BigInt(auth.witness.validAfter),
      },
    },
  });
  return { ...payment, payload: { signature, permit2Authorization: auth } };
}

/** A copy of a payload whose signature has one byte flipped. */
export function withFlippedSignature(payment: PaymentPayload): PaymentPayload {
  const signature = (payment.payload as { signature: Hex }).signature;
  const at = 10;
  const flipped = (parseInt(signature.slice(at, at + 2), 16) ^ 0xff).toString(16).padStart(2, '0');
  return {
    ...payment,
    payload: { ...payment.payload, signature: `${signature.slice(0, at)}${flipped}${signature.slice(at + 2)}` },
  };
}
