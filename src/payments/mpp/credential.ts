import type { Credential } from 'mppx';
import { PAYMENT_LIMITS, withinPaymentLimits } from '../reading/bounds.js';
import { loadMppx } from './lib.js';

/** An MPP credential as a transport received it: the `Authorization: Payment …` header, or the MCP `_meta` object. */
export type MppCredentialSource = { from: 'header'; value: string } | { from: 'meta'; value: unknown };

/** A credential decoded within our bounds, or the sentence saying why it cannot be read. */
export type DecodedCredential = { ok: true; credential: Credential.Credential } | { ok: false; message: string };

/** The authentication scheme name, compared without case (RFC 9110 §11.1). */
const SCHEME = 'payment';

export { isPaymentAuthorization } from '../../shared/http-wire.js';

/** Standard base64url (RFC 4648 §5), padding tolerated: a linear check on a string already bounded in length. */
const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

function headerToken(header: string): { ok: true; token: string } | { ok: false; message: string } {
  if (header.length > PAYMENT_LIMITS.maxHeaderChars) {
    return {
      ok: false,
      message: `The Authorization header is longer than ${PAYMENT_LIMITS.maxHeaderChars} characters.`,
    };
  }
  const token = header.trim().slice(SCHEME.length).trim();
  if (token.length === 0) return { ok: false, message: 'The Authorization: Payment header carries no credential.' };
  if (!BASE64URL.test(token))
    return {
      ok: false,
      message: 'The MPP credential is not base64url (RFC 4648 §5): send it as the MPP client library builds it.',
    };
  const bytes = Math.floor((token.replace(/=+$/, '').length * 3) / 4);
  if (bytes > PAYMENT_LIMITS.maxJsonBytes) {
    return {
      ok: false,
      message: `The MPP credential is too large: ${bytes} bytes of JSON exceed the limit of ${PAYMENT_LIMITS.maxJsonBytes}.`,
    };
  }
  return { ok: true, token };
}

/**
 * Decodes an MPP credential with mppx's own parser, after bounding what it reads: the header's length and decoded
 * size (HTTP), or the object's size, nesting and strings (MCP) — the same limits as an x402 payment. mppx's parser runs
 * only fixed, linear patterns and its own schemas, fetches nothing and compiles nothing from the credential.
 */
export async function decodeCredential(source: MppCredentialSource): Promise<DecodedCredential> {
  const { Credential } = await loadMppx();
  let header: string;
  if (source.from === 'header') {
    const token = headerToken(source.value);
    if (!token.ok) return token;
    header = `Payment ${token.token}`;
  } else {
    const value = source.value;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return { ok: false, message: 'The MPP credential in _meta must be an object with `challenge` and `payload`.' };
    }
    const bounded = withinPaymentLimits(value);
    if (!bounded.ok) return bounded;
    if (!('challenge' in value) || !('payload' in value)) {
      return { ok: false, message: 'The MPP credential in _meta must be an object with `challenge` and `payload`.' };
    }
    try {
      header = Credential.serialize(value as Credential.Credential);
    } catch {
      return {
        ok: false,
        message: 'The MPP credential in _meta is not a credential: its challenge could not be read.',
      };
    }
  }
  let credential: Credential.Credential;
  try {
    credential = Credential.deserialize(header);
  } catch {
    return {
      ok: false,
      message:
        'The MPP credential is malformed: it must be base64url JSON with the echoed `challenge` and a `payload`.',
    };
  }
  // The decoded credential is held to the same shape limits as an x402 payment before anything reads its fields.
  const bounded = withinPaymentLimits(credential);
  if (!bounded.ok) return bounded;
  return { ok: true, credential };
}
