import { createHash } from 'node:crypto';
import { extractAndValidatePaymentIdentifier, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import type { PaymentPayload } from '@x402/core/types';
import type { Challenge } from './requirements.js';

/** JSON with object keys sorted, so equal inputs hash equally whatever order the caller sent. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What a payment pays for: the tool and its parsed input, hashed (sha-256 hex). */
export function requestHash(tool: string, input: unknown): string {
  return createHash('sha256').update(tool).update('\n').update(canonical(input)).digest('hex');
}

/** The `payment-identifier` id a payment carries where the challenge declares the extension: absent, valid, or why not. */
export type IdentifierResult = { type: 'none' } | { type: 'id'; id: string } | { type: 'invalid'; message: string };

/** Reads and validates the client's idempotency id (16–128 of [A-Za-z0-9_-]). */
export function paymentIdentifier(challenge: Challenge, payload: PaymentPayload): IdentifierResult {
  const declared = challenge.x402Version === 2 && challenge.extensions?.[PAYMENT_IDENTIFIER] !== undefined;
  if (!declared || payload.extensions?.[PAYMENT_IDENTIFIER] === undefined) return { type: 'none' };
  const { id, validation } = extractAndValidatePaymentIdentifier(payload);
  if (!validation.valid) {
    return {
      type: 'invalid',
      message: `The payment-identifier extension is invalid (${(validation.errors ?? []).join('; ')}); send an id of 16–128 characters from [A-Za-z0-9_-], e.g. "pay_" + a UUID without dashes.`,
    };
  }
  return id ? { type: 'id', id } : { type: 'none' };
}
