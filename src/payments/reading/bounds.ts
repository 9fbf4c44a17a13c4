/**
 * Limits on a payment proof before anything else reads it. Everything a server does with a payment before the
 * facilitator has verified it costs the sender nothing, so that work must be bounded by these numbers, whatever the
 * sender puts in it: size, nesting, strings, arrays, objects and extensions.
 */
export const PAYMENT_LIMITS = {
  /** Characters of a base64 payment header (HTTP `PAYMENT-SIGNATURE` / `X-PAYMENT`, or a string in MCP `_meta`). */
  maxHeaderChars: 32 * 1024,
  /** Bytes of the payment as JSON (decoded header, or the MCP `_meta` object as it would serialise). */
  maxJsonBytes: 24 * 1024,
  /** Nested objects and arrays, the payment itself counting as one. */
  maxDepth: 20,
  /** Characters of any one string (keys included): every string that can reach a regular expression is this short. */
  maxStringChars: 8 * 1024,
  /** Items of any one array. */
  maxArrayItems: 256,
  /** Keys of any one object. */
  maxObjectKeys: 128,
  /** Extensions echoed or added by the client (`extensions` keys). */
  maxExtensions: 8,
  /** Bytes of any one extension as JSON. */
  maxExtensionBytes: 8 * 1024,
} as const;

/** A payment proof that is within every limit, or the first limit it exceeds, said for the caller. */
export type BoundsResult = { ok: true } | { ok: false; message: string };

/** Bytes a JSON string literal of `s` takes at least (quotes included; escapes would only add). */
const stringBytes = (s: string) => Buffer.byteLength(s, 'utf8') + 2;

/**
 * Checks a parsed JSON value (or an MCP `_meta` object, which never went through JSON text here) against the limits
 * with one iterative walk that stops at the first excess: its work is bounded by the limits, not by the value.
 * Non-JSON values (functions, symbols, bigint) cannot arrive from JSON and are refused.
 */
export function withinPaymentLimits(value: unknown, limits = PAYMENT_LIMITS): BoundsResult {
  let bytes = 0;
  const stack: Array<{ node: unknown; depth: number }> = [{ node: value, depth: 1 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (node === undefined) {
      continue; // JSON leaves it out (an MCP object built in-process may hold one)
    } else if (node === null || typeof node === 'boolean') {
      bytes += 5;
    } else if (typeof node === 'number') {
      bytes += 8;
    } else if (typeof node === 'string') {
      if (node.length > limits.maxStringChars)
        return tooLong(`a string of ${node.length} characters`, `${limits.maxStringChars} characters`);
      bytes += stringBytes(node);
    } else if (typeof node === 'object') {
      if (depth > limits.maxDepth) return tooLong('nesting', `${limits.maxDepth} levels`);
      if (Array.isArray(node)) {
        if (node.length > limits.maxArrayItems)
          return tooLong(`an array of ${node.length} items`, `${limits.maxArrayItems} items`);
        bytes += 2 + node.length;
        for (let i = node.length - 1; i >= 0; i--) stack.push({ node: node[i], depth: depth + 1 });
      } else {
        const keys = Object.keys(node);
        if (keys.length > limits.maxObjectKeys)
          return tooLong(`an object with ${keys.length} keys`, `${limits.maxObjectKeys} keys`);
        bytes += 2 + keys.length;
        for (const key of keys) {
          if (key.length > limits.maxStringChars)
            return tooLong(`a key of ${key.length} characters`, `${limits.maxStringChars} characters`);
          bytes += stringBytes(key);
          stack.push({ node: (node as Record<string, unknown>)[key], depth: depth + 1 });
        }
      }
    } else {
      return {
        ok: false,
        message: `The payment contains a ${typeof node}, which JSON cannot carry; send a JSON x402 PaymentPayload.`,
      };
    }
    if (bytes > limits.maxJsonBytes) return tooLong('the payment', `${limits.maxJsonBytes} bytes of JSON`);
  }
  return { ok: true };
}

/** Checks the number and the size of the payment's extensions (the payment as a whole is within the limits already). */
export function extensionsWithinLimits(
  extensions: Record<string, unknown> | undefined,
  limits = PAYMENT_LIMITS,
): BoundsResult {
  if (!extensions) return { ok: true };
  const keys = Object.keys(extensions);
  if (keys.length > limits.maxExtensions)
    return tooLong(`${keys.length} extensions`, `${limits.maxExtensions} extensions`);
  for (const key of keys) {
    const size = Buffer.byteLength(JSON.stringify(extensions[key]) ?? '', 'utf8');
    if (size > limits.maxExtensionBytes)
      return tooLong(`the extension "${key.slice(0, 64)}" (${size} bytes)`, `${limits.maxExtensionBytes} bytes`);
  }
  return { ok: true };
}

function tooLong(what: string, limit: string): BoundsResult {
  return {
    ok: false,
    message: `The payment is too large: ${what} exceeds the limit of ${limit}. Send the PaymentPayload as the x402 client library builds it, echoing the advertised entry and extensions unchanged.`,
  };
}
