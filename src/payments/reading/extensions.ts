/**
 * Echoed x402 extensions, checked against our own declarations only. A client echoes each declared extension as
 * `{info, schema}`; the `schema` it sends is never read (never compiled, never forwarded): what goes on to the
 * facilitator is our own declaration with the client's validated additions. Extensions we did not declare are dropped.
 * The checkers are built once per challenge at start-up.
 */
import { z } from 'zod';
import { readIdentifier } from '../ledger/idempotency.js';
import { containsSubset } from '../../shared/json.js';
import type { Challenge } from '../challenges/requirements.js';

/** Extension keys this server declares (the names of the x402 extensions). */
export const EXTENSION_KEYS = {
  paymentIdentifier: 'payment-identifier',
  builderCode: 'builder-code',
  bazaar: 'bazaar',
} as const;

/** ERC-8021 builder codes: 1–32 of [a-z0-9_]. */
export const BUILDER_CODE_PATTERN = /^[a-z0-9_]{1,32}$/;
/** Service codes a client and a server may add to a builder-code echo together (5 + 5); the facilitator adds `w`. */
export const MAX_ECHOED_SERVICE_CODES = 10;

/** What checking the echoed extensions came to: the extensions to forward and the client's payment id, or a refusal. */
export type EchoCheck =
  | { ok: true; extensions: Record<string, unknown> | undefined; paymentId: string | undefined }
  | { ok: false; status: 400 | 402; reason: string; message: string };

type Declared = { info?: unknown; schema?: unknown };
/** Checks one echoed extension: the `info` to forward, or a refusal. */
type InfoCheck = (
  echoedInfo: unknown,
) => { ok: true; info: unknown; paymentId?: string } | Extract<EchoCheck, { ok: false }>;

const infoOf = (value: unknown): unknown =>
  value !== null &&
  typeof value === 'object' &&
  !Array.isArray(value) &&
  Object.prototype.hasOwnProperty.call(value, 'info')
    ? (value as Declared).info
    : value;

const mismatch = (key: string, message?: string): Extract<EchoCheck, { ok: false }> => ({
  ok: false,
  status: 402,
  reason: 'extension_echo_mismatch',
  message: message ?? `The echoed extension "${key}" differs from what this endpoint declared; echo it unchanged.`,
});

/** Declared info must be echoed as declared (additions allowed); the forwarded info is ours. */
function exactEcho(key: string, declared: unknown): InfoCheck {
  return (echoed) => (containsSubset(declared, echoed) ? { ok: true, info: declared } : mismatch(key));
}

/** The payment id: `required` as declared, `id` by our fixed 16–128 [A-Za-z0-9_-] rule. */
function paymentIdentifierEcho(declared: unknown): InfoCheck {
  const key = EXTENSION_KEYS.paymentIdentifier;
  return (echoed) => {
    if (!containsSubset(declared, echoed)) return mismatch(key);
    const read = readIdentifier(echoed);
    switch (read.type) {
      case 'invalid':
        return { ok: false, status: 400, reason: 'invalid_payment_identifier', message: read.message };
      case 'none':
        return { ok: true, info: declared };
      case 'id':
        return { ok: true, info: { ...(declared as object), id: read.id }, paymentId: read.id };
    }
  };
}

/** The app code exactly as declared, plus at most ten valid service codes (and a wallet code); nothing else. */
function builderCodeEcho(declared: unknown): InfoCheck {
  const key = EXTENSION_KEYS.builderCode;
  const appCode = (declared as { a?: unknown } | undefined)?.a;
  const code = z.string().regex(BUILDER_CODE_PATTERN);
  const schema = z.strictObject({
    a: z.literal(typeof appCode === 'string' ? appCode : ''),
    s: z.union([code, z.array(code).max(MAX_ECHOED_SERVICE_CODES)]).optional(),
    w: code.optional(),
  });
  return (echoed) => {
    const parsed = schema.safeParse(echoed);
    if (parsed.success) return { ok: true, info: parsed.data };
    const issue = parsed.error.issues[0];
    const problem = `builder-code ${issue?.path.join('.') || 'info'}: ${issue?.message ?? 'invalid'}`;
    return mismatch(
      key,
      `The echoed builder-code extension is not acceptable (${problem}); echo "a" unchanged and add at most ${MAX_ECHOED_SERVICE_CODES} service codes matching ^[a-z0-9_]{1,32}$.`,
    );
  };
}

function checkFor(key: string, declared: unknown): InfoCheck {
  switch (key) {
    case EXTENSION_KEYS.paymentIdentifier:
      return paymentIdentifierEcho(declared);
    case EXTENSION_KEYS.builderCode:
      return builderCodeEcho(declared);
    default:
      return exactEcho(key, declared);
  }
}

/**
 * Builds, once per challenge, the check of a payment's echoed extensions: each declared extension the client echoed is
 * checked with our own rule and forwarded as our declaration (with the client's validated id or service codes).
 */
export function echoChecker(challenge: Challenge): (echoed: Record<string, unknown> | undefined) => EchoCheck {
  const declared = challenge.x402Version === 2 ? ((challenge.extensions ?? {}) as Record<string, Declared>) : {};
  const checks = Object.entries(declared).map(([key, ext]) => ({
    key,
    schema: ext.schema,
    check: checkFor(key, ext.info),
  }));
  return (echoed) => {
    if (!echoed || checks.length === 0) return { ok: true, extensions: undefined, paymentId: undefined };
    const forwarded: Record<string, unknown> = {};
    let paymentId: string | undefined;
    for (const { key, schema, check } of checks) {
      if (!Object.prototype.hasOwnProperty.call(echoed, key)) continue;
      const result = check(infoOf(echoed[key]));
      if (!result.ok) return result;
      forwarded[key] = { info: result.info, schema };
      paymentId ??= result.paymentId;
    }
    return { ok: true, extensions: Object.keys(forwarded).length > 0 ? forwarded : undefined, paymentId };
  };
}
