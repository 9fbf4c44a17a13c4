import type { PaymentPayload } from '@x402/core/types';
import type { Challenge } from '../challenges/requirements.js';

/** The `payment-identifier` id a payment carries where the challenge declares the extension: absent, valid, or why not. */
export type IdentifierResult = { type: 'none' } | { type: 'id'; id: string } | { type: 'invalid'; message: string };

/** Our fixed rule for a payment id (x402 payment-identifier): 16–128 of [A-Za-z0-9_-]. Never a client's pattern. */
const PAYMENT_ID = /^[A-Za-z0-9_-]{16,128}$/;
const PAYMENT_ID_MAX = 128;

const invalid = (why: string): IdentifierResult => ({
  type: 'invalid',
  message: `The payment-identifier extension is invalid (${why}); send an id of 16–128 characters from [A-Za-z0-9_-], e.g. "pay_" + a UUID without dashes.`,
});

/** Reads the id from an echoed payment-identifier `info` with our fixed rule; the client's `schema` is never looked at. */
export function readIdentifier(info: unknown): IdentifierResult {
  if (info === null || typeof info !== 'object' || Array.isArray(info)) return invalid('info must be an object');
  const id = (info as { id?: unknown }).id;
  if (id === undefined) return { type: 'none' };
  if (typeof id !== 'string') return invalid('id must be a string');
  // The length is checked first, so the pattern only ever runs on a short string.
  if (id.length > PAYMENT_ID_MAX || !PAYMENT_ID.test(id))
    return invalid(`id must be 16–128 characters from [A-Za-z0-9_-], got ${id.length} characters`);
  return { type: 'id', id };
}

/** Reads and validates the client's idempotency id (16–128 of [A-Za-z0-9_-]) where the challenge declares the extension. */
export function paymentIdentifier(challenge: Challenge, payload: PaymentPayload): IdentifierResult {
  const declared = challenge.x402Version === 2 && challenge.extensions?.['payment-identifier'] !== undefined;
  const ext = payload.extensions?.['payment-identifier'] as { info?: unknown } | undefined;
  if (!declared || ext === undefined) return { type: 'none' };
  return readIdentifier(ext?.info);
}
