import { randomBytes } from 'node:crypto';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { x402Client } from '@x402/core/client';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import type { Hex, PrivateKeyAccount } from 'viem';

/** Overrides for hand-built EIP-3009 authorizations (tamper and expiry tests). */
export interface SignOptions {
  value?: string;
  to?: string;
  validAfter?: bigint;
  validBefore?: bigint;
  nonce?: Hex;
  chainId?: number;
}

/** The EIP-712 field list of an EIP-3009 TransferWithAuthorization. */
export const TRANSFER_WITH_AUTHORIZATION = [
  { name: 'from', type: 'address' },
  { name: 'to', type: 'address' },
  { name: 'value', type: 'uint256' },
  { name: 'validAfter', type: 'uint256' },
  { name: 'validBefore', type: 'uint256' },
  { name: 'nonce', type: 'bytes32' },
] as const;

/** Signs an EIP-3009 TransferWithAuthorization for an advertised entry with viem and wraps it as a v2 PaymentPayload. */
export async function signExactPayment(
  account: PrivateKeyAccount,
  accepted: PaymentRequirements,
  opts: SignOptions = {},
): Promise<PaymentPayload> {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const authorization = {
    from: account.address,
    to: (opts.to ?? accepted.payTo) as Hex,
    value: BigInt(opts.value ?? accepted.amount),
    validAfter: opts.validAfter ?? 0n,
    validBefore: opts.validBefore ?? now + BigInt(accepted.maxTimeoutSeconds),
    nonce: opts.nonce ?? (`0x${randomBytes(32).toString('hex')}` as Hex),
  };
  const extra = accepted.extra as { name: string; version: string };
  const signature = await account.signTypedData({
    domain: {
      name: extra.name,
      version: extra.version,
      chainId: opts.chainId ?? Number(accepted.network.split(':')[1]),
      verifyingContract: accepted.asset as Hex,
    },
    types: { TransferWithAuthorization: TRANSFER_WITH_AUTHORIZATION },
    primaryType: 'TransferWithAuthorization',
    message: authorization,
  });
  return {
    x402Version: 2,
    accepted,
    payload: {
      signature,
      authorization: {
        ...authorization,
        value: authorization.value.toString(),
        validAfter: authorization.validAfter.toString(),
        validBefore: authorization.validBefore.toString(),
      },
    },
  };
}

/** Creates a payment with the official x402 client (`x402Client` + `ExactEvmScheme`) for the given network. */
export async function officialPayment(
  account: PrivateKeyAccount,
  challenge: PaymentRequired,
  network: string,
): Promise<PaymentPayload> {
  const client = new x402Client(
    (_v, reqs) => reqs.find((r) => r.network === network && r.scheme === 'exact') ?? reqs[0]!,
  );
  client.register('eip155:*', new ExactEvmScheme(account));
  return client.createPaymentPayload(challenge);
}

/** Standard base64 of a payment payload, as the PAYMENT-SIGNATURE header carries it. */
export function encodePayment(payload: unknown): string {
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64');
}
