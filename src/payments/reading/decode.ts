import type { PaymentPayload } from '@x402/core/types';
import { z } from 'zod';
import { PAYMENT_LIMITS, extensionsWithinLimits, withinPaymentLimits } from './bounds.js';

import type { DecodedCredential } from '../mpp/credential.js';

/**
 * Where a payment proof arrived from; the version it must carry follows from it. `mpp`: an MPP credential, decoded
 * once by the pipeline, which the broker turns into the x402 payment it stands for.
 */
export type PaymentSource = 'payment-signature' | 'x-payment' | 'mcp-meta' | 'mpp';

/** An x402 payment proof as the transport received it, not yet decoded. */
export interface X402RawPayment {
  source: Exclude<PaymentSource, 'mpp'>;
  value: unknown;
}

/** A payment proof as the pipeline hands it to the broker: an x402 proof not yet decoded, or a decoded MPP credential. */
export type RawPayment = X402RawPayment | { source: 'mpp'; credential: DecodedCredential };

/** Result of decoding a payment proof: a parsed payload or the reason it is malformed. */
export type DecodeResult = { ok: true; payload: PaymentPayload } | { ok: false; message: string };

/**
 * The bytes of a standard base64 string (RFC 4648 §4; padding optional), or undefined when it is not one. Node's
 * decoder skips characters outside the alphabet and stops at a `=`, so any such character leaves fewer bytes than the
 * characters promise; the URL-safe `-` and `_`, which it would decode, are refused first. (Linear, in native code:
 * a regular expression over a 5 KB voucher header cost more than the rest of its decoding.)
 */
function standardBase64(value: string): Buffer | undefined {
  if (value.includes('-') || value.includes('_')) return undefined;
  const padding = value.endsWith('==') ? 2 : value.endsWith('=') ? 1 : 0;
  const body = value.length - padding;
  if (body % 4 === 1 || (padding > 0 && body % 4 === 0)) return undefined;
  const bytes = Buffer.from(value, 'base64');
  return bytes.length === Math.floor((body * 3) / 4) ? bytes : undefined;
}

const text = z.string().min(1);
const record = z.record(z.string(), z.unknown());

/**
 * The envelope of a version-2 payment, checked with our own schema (built once, never from client data). `accepted`
 * keeps unknown keys: an entry advertised under a short network name also carries version-1 fields, which are matched
 * against ours. What is forwarded for verification is rebuilt from our own entry later (see match.ts).
 */
const PaymentPayloadV2Schema = z.object({
  x402Version: z.literal(2),
  accepted: z.looseObject({
    scheme: text,
    network: text,
    asset: text,
    amount: text,
    payTo: text,
    maxTimeoutSeconds: z.number().positive(),
    extra: record.nullish(),
  }),
  payload: record,
  resource: z.unknown().optional(),
  extensions: record.nullish(),
});

/** The envelope of a version-1 payment: scheme and network name the advertised entry (docs/spec-notes.md#version-1-payments). */
const PaymentPayloadV1Schema = z.object({ x402Version: z.literal(1), scheme: text, network: text, payload: record });

function fromBase64(value: string): { ok: true; json: unknown } | { ok: false; message: string } {
  const trimmed = value.trim();
  if (trimmed.length === 0) return { ok: false, message: 'The payment header is empty.' };
  if (trimmed.length > PAYMENT_LIMITS.maxHeaderChars) {
    return { ok: false, message: `The payment header is longer than ${PAYMENT_LIMITS.maxHeaderChars} characters.` };
  }
  const bytes = standardBase64(trimmed);
  if (!bytes) return { ok: false, message: 'The payment header is not standard base64 (RFC 4648 §4, with padding).' };
  if (bytes.length > PAYMENT_LIMITS.maxJsonBytes) {
    return {
      ok: false,
      message: `The payment is too large: ${bytes.length} bytes of JSON exceed the limit of ${PAYMENT_LIMITS.maxJsonBytes}.`,
    };
  }
  try {
    return { ok: true, json: JSON.parse(bytes.toString('utf8')) as unknown };
  } catch {
    return { ok: false, message: 'The payment header decodes from base64 but is not JSON.' };
  }
}

function invalid(error: z.ZodError): DecodeResult {
  const issue = error.issues[0];
  const where = issue?.path.length ? ` at ${issue.path.join('.')}` : '';
  return {
    ok: false,
    message: `The payment is not a valid x402 PaymentPayload${where}: ${issue?.message ?? 'invalid'}.`,
  };
}

/**
 * Decodes a header (base64 JSON) or an MCP `_meta` value (object or base64 string) into a PaymentPayload, within
 * {@link PAYMENT_LIMITS}: nothing in it is compiled or evaluated, and the work is bounded by the limits.
 */
export function decodePayment(raw: X402RawPayment): DecodeResult {
  let json: unknown = raw.value;
  if (typeof raw.value === 'string') {
    const decoded = fromBase64(raw.value);
    if (!decoded.ok) return decoded;
    json = decoded.json;
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return { ok: false, message: 'The payment must be a JSON object (an x402 PaymentPayload).' };
  }
  const bounded = withinPaymentLimits(json);
  if (!bounded.ok) return bounded;
  const version = (json as { x402Version?: unknown }).x402Version;
  if (version === 1) {
    const parsed = PaymentPayloadV1Schema.safeParse(json);
    return parsed.success ? { ok: true, payload: parsed.data as unknown as PaymentPayload } : invalid(parsed.error);
  }
  const parsed = PaymentPayloadV2Schema.safeParse(json);
  if (!parsed.success) return invalid(parsed.error);
  const extensions = extensionsWithinLimits(parsed.data.extensions ?? undefined);
  if (!extensions.ok) return extensions;
  return { ok: true, payload: parsed.data as unknown as PaymentPayload };
}
