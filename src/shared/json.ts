import { createHash } from 'node:crypto';

/** JSON with object keys sorted, so equal values give equal text whatever order their keys came in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Equality of two JSON values, key order ignored. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => jsonEqual(item, other[i]));
  }
  const left = Object.entries(a as Record<string, unknown>).filter(([, v]) => v !== undefined);
  const right = b as Record<string, unknown>;
  const rightCount = Object.values(right).filter((v) => v !== undefined).length;
  return (
    left.length === rightCount &&
    left.every(([k, v]) => Object.prototype.hasOwnProperty.call(right, k) && jsonEqual(v, right[k]))
  );
}

/**
 * Whether `actual` contains everything `expected` says: every key of an expected object is present with a value that
 * contains the expected one (keys the sender added are allowed); arrays and other values must be equal. This is the
 * x402 rule for echoes (an echo may add, never remove or change).
 */
export function containsSubset(expected: unknown, actual: unknown): boolean {
  if (expected === null || typeof expected !== 'object' || Array.isArray(expected)) return jsonEqual(expected, actual);
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
  const record = actual as Record<string, unknown>;
  return Object.entries(expected as Record<string, unknown>).every(([key, value]) =>
    Object.prototype.hasOwnProperty.call(record, key) ? containsSubset(value, record[key]) : value === undefined,
  );
}

/** What a payment pays for: the tool and its parsed input, hashed (sha-256 hex of the canonical JSON). */
export function requestHash(tool: string, input: unknown): string {
  return createHash('sha256').update(tool).update('\n').update(canonicalJson(input)).digest('hex');
}
