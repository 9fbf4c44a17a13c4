/**
 * The answers of a remote x402 facilitator: the shapes of `/verify`, `/settle` and `/supported`, how a refusal or an
 * unreadable answer becomes the error `@x402/core`'s HTTPFacilitatorClient would raise, and how errors quote a body.
 */
import { FacilitatorResponseError } from '@x402/core/server';
import { SettleError, VerifyError, type SettleResponse, type VerifyResponse } from '@x402/core/types';
import { z } from 'zod';

/** The three facilitator operations. */
export type FacilitatorOperation = 'verify' | 'settle' | 'supported';

const optionalText = z
  .string()
  .nullish()
  .transform((v) => v ?? undefined);
const optionalRecord = z
  .record(z.string(), z.unknown())
  .nullish()
  .transform((v) => v ?? undefined);
/** The body of a `/verify` answer. */
export const VerifyAnswer = z.object({
  isValid: z.boolean(),
  invalidReason: optionalText,
  invalidMessage: optionalText,
  payer: optionalText,
  extensions: optionalRecord,
  extra: optionalRecord,
});
/** The body of a `/settle` answer. */
export const SettleAnswer = z.object({
  success: z.boolean(),
  errorReason: optionalText,
  errorMessage: optionalText,
  payer: optionalText,
  transaction: z.string(),
  network: z.string(),
  amount: optionalText,
  extensions: optionalRecord,
  extra: optionalRecord,
});
/** The body of a `/supported` answer. */
export const SupportedAnswer = z.object({
  kinds: z.array(z.object({ x402Version: z.number(), scheme: z.string(), network: z.string(), extra: optionalRecord })),
  extensions: z.array(z.string()).default([]),
  signers: z.record(z.string(), z.array(z.string())).default({}),
});

/** The first 200 characters of an answer, on one line (errors quote it). */
export function excerpt(text: string): string {
  const compact = text.trim().replace(/\s+/g, ' ');
  if (!compact) return '<empty response>';
  return compact.length <= 200 ? compact : `${compact.slice(0, 197)}...`;
}

/** One answer of the facilitator. */
export interface Answer {
  status: number;
  /** The body, with every header value we sent blanked out (an echoing proxy must not put a secret in an error). */
  text: string;
  retryAfter: string | undefined;
}

/** `text` with each secret (and its part after `Bearer `) replaced; values shorter than 4 characters are left alone. */
export function redacted(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    for (const part of [secret, secret.replace(/^Bearer\s+/i, '')])
      if (part.length >= 4) out = out.split(part).join('[redacted]');
  }
  return out;
}

/** A 401/403 answer: the facilitator's own reason when its JSON body gives one, else an excerpt. */
export function authReason(text: string): string {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    for (const field of ['errorMessage', 'message', 'error', 'errorType']) {
      if (typeof body[field] === 'string' && body[field]) return excerpt(body[field] as string);
    }
  } catch {
    // not JSON: quote the text
  }
  return excerpt(text);
}

/** The body of a 2xx answer checked against its shape; invalid JSON or data is a FacilitatorResponseError quoting it. */
export function parseAnswer<T>(operation: FacilitatorOperation, schema: z.ZodType<T>, text: string): T {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new FacilitatorResponseError(`Facilitator ${operation} returned invalid JSON: ${excerpt(text)}`);
  }
  const result = schema.safeParse(json);
  if (!result.success)
    throw new FacilitatorResponseError(`Facilitator ${operation} returned invalid data: ${excerpt(text)}`);
  return result.data;
}

/** A non-2xx answer: the facilitator's own verdict when its body carries one, else an error quoting it. */
export function refusalError(operation: 'verify' | 'settle', answer: Answer): Error {
  let data: unknown;
  try {
    data = JSON.parse(answer.text);
  } catch {
    return new Error(`Facilitator ${operation} failed (${answer.status}): ${excerpt(answer.text)}`);
  }
  if (operation === 'verify' && typeof data === 'object' && data !== null && 'isValid' in data)
    return new VerifyError(answer.status, data as VerifyResponse);
  if (operation === 'settle' && typeof data === 'object' && data !== null && 'success' in data)
    return new SettleError(answer.status, data as SettleResponse);
  return new Error(`Facilitator ${operation} failed (${answer.status}): ${excerpt(JSON.stringify(data))}`);
}
