import type { PaymentPayload } from '@x402/core/types';
import type { Hex, PrivateKeyAccount } from 'viem';
import { expect } from 'vitest';
import type { Runtime } from '../../src/runtime/runtime.js';
import { TRANSFER_WITH_AUTHORIZATION } from './payer.js';

/** Seconds in ten years, the validity the issue found accepted. */
export const TEN_YEARS_SECONDS = 10n * 365n * 24n * 3600n;

/** The largest uint256, the longest validity an EIP-3009 or Permit2 authorization can state. */
export const UINT256_MAX = 2n ** 256n - 1n;

/** Now, in Unix seconds. */
export const nowSeconds = (): bigint => BigInt(Math.floor(Date.now() / 1000));

/** What a server did with the payments it was sent: claims in the replay guard, verifications asked of the facilitator. */
export interface PaymentPathCounts {
  claims: number;
  verifies: number;
}

const watched = new WeakMap<Runtime, PaymentPathCounts>();

/**
 * Counts, on a running server, every claim its broker makes in the payment ledger and every verification it asks of
 * its facilitator (the real ledger and facilitator still do the work). The same counts are returned for a runtime
 * already watched.
 */
export function watchPaymentPath(runtime: Runtime): PaymentPathCounts {
  const known = watched.get(runtime);
  if (known) return known;
  const counts: PaymentPathCounts = { claims: 0, verifies: 0 };
  const ledger = runtime.store.ledger;
  const claim = ledger.claimPayment.bind(ledger);
  ledger.claimPayment = (c) => {
    counts.claims++;
    return claim(c);
  };
  const client = runtime.facilitator.client;
  const verify = client.verify.bind(client);
  client.verify = (p, r) => {
    counts.verifies++;
    return verify(p, r);
  };
  watched.set(runtime, counts);
  return counts;
}

/** Asserts an HTTP answer is the 402 refusal of an authorization valid for too long, telling the payer what to sign. */
export async function expectWindowRefused(res: Response, maxTimeoutSeconds: number): Promise<void> {
  const body = (await res.json()) as { error?: string; message?: string; accepts?: unknown[] };
  expect(res.status).toBe(402);
  expect(body.error).toBe('authorization_window_too_long');
  expect(body.accepts?.length).toBeGreaterThan(0);
  expect(body.message).toContain(`sign an authorization that expires within ${maxTimeoutSeconds} seconds`);
}

interface Eip3009 {
  from: Hex;
  to: Hex;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: Hex;
}

/**
 * A copy of an EIP-3009 payment (v1 or v2, e.g. from the official client) with another `validBefore`, signed again by
 * the payer with viem's `signTypedData` over the token's domain: the official client cannot state 2^256−1 itself.
 */
export async function withValidBefore(
  payer: PrivateKeyAccount,
  payment: PaymentPayload,
  domain: { asset: string; chainId: number; extra: { name?: unknown; version?: unknown } },
  validBefore: bigint,
): Promise<PaymentPayload> {
  const authorization = { ...(payment.payload as { authorization: Eip3009 }).authorization };
  authorization.validBefore = validBefore.toString();
  const signature = await payer.signTypedData({
    domain: {
      name: String(domain.extra.name),
      version: String(domain.extra.version),
      chainId: domain.chainId,
      verifyingContract: domain.asset as Hex,
    },
    types: { TransferWithAuthorization: TRANSFER_WITH_AUTHORIZATION },
    primaryType: 'TransferWithAuthorization',
    message: {
      ...authorization,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore,
    },
  });
  return { ...payment, payload: { signature, authorization } };
}
