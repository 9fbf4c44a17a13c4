import { NetworkSchemaV1, PaymentPayloadV2Schema, PaymentRequirementsV2Schema, parsePaymentPayload } from '@x402/core/schemas';
import type { PaymentPayload } from '@x402/core/types';

/** Where a payment proof arrived from; the version it must carry follows from it. */
export type PaymentSource = 'payment-signature' | 'x-payment' | 'mcp-meta';

/** A payment proof as the transport received it, not yet decoded. */
export interface RawPayment {
  source: PaymentSource;
  value: unknown;
}

/** Result of decoding a payment proof: a parsed payload or the reason it is malformed. */
export type DecodeResult = { ok: true; payload: PaymentPayload } | { ok: false; message: string };

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const MAX_PAYMENT_CHARS = 32 * 1024;

function fromBase64(text: string): DecodeResult | unknown {
  const trimmed = text.trim();
  if (trimmed.length === 0) return { ok: false, message: 'The payment header is empty.' };
  if (trimmed.length > MAX_PAYMENT_CHARS) {
    return { ok: false, message: `The payment header is longer than ${MAX_PAYMENT_CHARS} characters.` };
  }
  if (!BASE64.test(trimmed) || trimmed.length % 4 === 1) {
    return { ok: false, message: 'The payment header is not standard base64 (RFC 4648 §4, with padding).' };
  }
  try {
    return JSON.parse(Buffer.from(trimmed, 'base64').toString('utf8')) as unknown;
  } catch {
    return { ok: false, message: 'The payment header decodes from base64 but is not JSON.' };
  }
}

function isFailure(v: unknown): v is { ok: false; message: string } {
  return typeof v === 'object' && v !== null && (v as { ok?: unknown }).ok === false && 'message' in v;
}

/**
 * A version-2 payload for an entry advertised under a short network name (the social order's `base` entry, spec
 * §9): the core schema wants CAIP-2 there and would drop the entry's v1 fields, so `accepted` is read with a
 * short network name and kept whole; it must then equal our advertised entry field for field.
 */
const ShortNamedV2PayloadSchema = PaymentPayloadV2Schema.extend({
  accepted: PaymentRequirementsV2Schema.extend({ network: NetworkSchemaV1 }).passthrough(),
});

function isShortNamedV2(json: object): boolean {
  const { x402Version, accepted } = json as { x402Version?: unknown; accepted?: { network?: unknown } };
  return x402Version === 2 && typeof accepted?.network === 'string' && accepted.network.length > 0 && !accepted.network.includes(':');
}

/** Decodes a header (base64 JSON) or an MCP `_meta` value (object or base64 string) into a PaymentPayload. */
export function decodePayment(raw: RawPayment): DecodeResult {
  let json: unknown = raw.value;
  if (typeof raw.value === 'string') {
    json = fromBase64(raw.value);
    if (isFailure(json)) return json;
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return { ok: false, message: 'The payment must be a JSON object (an x402 PaymentPayload).' };
  }
  const parsed = isShortNamedV2(json) ? ShortNamedV2PayloadSchema.safeParse(json) : parsePaymentPayload(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? ` at ${issue.path.join('.')}` : '';
    return { ok: false, message: `The payment is not a valid x402 PaymentPayload${where}: ${issue?.message ?? 'invalid'}.` };
  }
  return { ok: true, payload: parsed.data as PaymentPayload };
}
