/**
 * Normalisation of recorded answers: what legitimately differs between two runs of the same build (ports, dates,
 * nonces, signatures, transaction hashes, ids, expiries) becomes a placeholder of the same kind, numbered by first
 * appearance within one answer (so "the receipt names the same hash as the request" survives). Embedded base64 JSON
 * (PAYMENT-REQUIRED, PAYMENT-RESPONSE, MPP requests and receipts) is decoded first, so its bytes are compared exactly.
 */

/** Numbers the distinct volatile values of one answer. */
export class Placeholders {
  private readonly seen = new Map<string, string>();
  private readonly counts = new Map<string, number>();

  /** The placeholder of `value` as a `kind`: the same value always gets the same one within this answer. */
  of(kind: string, value: string): string {
    const key = `${kind}\u0000${value}`;
    let found = this.seen.get(key);
    if (!found) {
      const n = (this.counts.get(kind) ?? 0) + 1;
      this.counts.set(kind, n);
      found = `<${kind}#${n}>`;
      this.seen.set(key, found);
    }
    return found;
  }
}

const NOW_S = Math.floor(Date.now() / 1000);
const TWO_YEARS_S = 2 * 365 * 86_400;
const nearNow = (seconds: number) => Math.abs(seconds - NOW_S) < TWO_YEARS_S;

const BASE64ISH = /^[A-Za-z0-9+/_-]{16,}={0,2}$/;

/** Decodes a base64 or base64url string that carries JSON, if it round-trips exactly; else undefined. */
export function decodeBase64Json(value: string): { encoding: string; text: string } | undefined {
  if (!BASE64ISH.test(value)) return undefined;
  const url = /[-_]/.test(value) || !/[+/=]/.test(value);
  for (const encoding of url ? (['base64url', 'base64'] as const) : (['base64', 'base64url'] as const)) {
    const bytes = Buffer.from(value, encoding);
    if (bytes.toString(encoding) !== value) continue;
    const text = bytes.toString('utf8');
    if (!/^\s*[[{]/.test(text) || Buffer.from(text, 'utf8').compare(bytes) !== 0) continue;
    try {
      JSON.parse(text);
      return { encoding, text };
    } catch {
      continue;
    }
  }
  return undefined;
}

type Rule = [RegExp, (p: Placeholders, match: string, ...groups: string[]) => string];

/** A JSON member `"key":value` (also inside JSON-in-a-string, where the quotes are escaped). */
const member = (key: string) => new RegExp(`(\\\\*"${key}\\\\*":)(\\\\*"[^"\\\\]*\\\\*"|-?[0-9.eE+-]+)`, 'g');

/**
 * Values that are measurements of the moment: probe durations (`/readyz`), and the local chain's gas price and the
 * native fee it implies (wallet-readiness), which move with the chain's base fee from block to block.
 */
const MEASUREMENTS = ['ms', 'gasPriceWei', 'gasPriceGwei'];

/** The volatile patterns, in the order they are replaced. */
const RULES: Rule[] = [
  ...MEASUREMENTS.map((key): Rule => [member(key), (_p, _m, name) => `${name}<${key}>`]),
  [
    /(\\*"fee\\*":\{\\*"symbol\\*":\\*"ETH\\*",\\*"decimals\\*":18,\\*"raw\\*":\\*")\d+(\\*",\\*"formatted\\*":\\*")[\d.]+/g,
    (_p, _m, head, middle) => `${head}<native-fee-raw>${middle}<native-fee>`,
  ],
  [/(127\.0\.0\.1|localhost):\d{2,5}/g, (_p, _m, host) => `${host}:<port>`],
  [/\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (?:[A-Z][a-z]{2}) \d{4} \d\d:\d\d:\d\d GMT\b/g, () => '<http-date>'],
  [/\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)\b/g, () => '<iso-time>'],
  [/0x[0-9a-fA-F]{64,}/g, (p, m) => p.of(`hex${m.length - 2}`, m.toLowerCase())],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, (p, m) => p.of('uuid', m.toLowerCase())],
  // MPP challenge ids: an HMAC over the challenge, whose expiry changes every run (auth-param and JSON forms).
  [/\b(id|challengeId)(="|":")([A-Za-z0-9_-]{20,})"/g, (p, _m, key, sep, id) => `${key}${sep}${p.of('mpp-id', id)}"`],
  [/"salt":"[A-Za-z0-9_-]{8,}"/g, (p, m) => `"salt":"${p.of('salt', m)}"`],
  [/(?<![\d.])1[6-9]\d{11}(?![\d.])/g, (_p, m) => (nearNow(Number(m) / 1000) ? '<epoch-ms>' : m)],
  [/(?<![\d.])1[6-9]\d{8}(?![\d.])/g, (_p, m) => (nearNow(Number(m)) ? '<epoch-s>' : m)],
];

/** Replaces embedded base64 JSON (quoted JSON strings and quoted auth-params) with its decoded, normalised text. */
function decodeEmbedded(text: string, p: Placeholders): string {
  return text.replace(/"([A-Za-z0-9+/_-]{16,}={0,2})"/g, (whole, value: string) => {
    const decoded = decodeBase64Json(value);
    return decoded ? `"«${decoded.encoding}:${normaliseText(decoded.text, p)}»"` : whole;
  });
}

/** Normalises one text: embedded base64 JSON decoded, then every volatile pattern replaced. */
export function normaliseText(text: string, p: Placeholders): string {
  let out = decodeEmbedded(text, p);
  for (const [pattern, replace] of RULES)
    out = out.replace(pattern, (...args) => replace(p, ...(args.slice(0, -2) as [string, ...string[]])));
  return out;
}

/** Normalises a header value: a whole-value base64 JSON (PAYMENT-REQUIRED…) is decoded, then the text rules run. */
export function normaliseHeaderValue(value: string, p: Placeholders): string {
  const decoded = decodeBase64Json(value);
  if (decoded) return `«${decoded.encoding}:${normaliseText(decoded.text, p)}»`;
  // An auth scheme with a token68 credential (`Authorization: Payment <base64url JSON>`).
  const [, scheme, token] = /^(\w+) ([A-Za-z0-9+/_-]{16,}={0,2})$/.exec(value) ?? [];
  const credential = token ? decodeBase64Json(token) : undefined;
  if (credential) return `${scheme} «${credential.encoding}:${normaliseText(credential.text, p)}»`;
  return normaliseText(value, p);
}

/** Normalises an express ETag (`W/"<length>-<hash>"`): the hash follows the volatile bytes, the length is kept. */
export function normaliseEtag(value: string): string {
  return value.replace(/^(W\/)?"([0-9a-f]+)-[A-Za-z0-9+/=_-]+"$/, (_m, weak: string | undefined, len: string) => {
    return `${weak ?? ''}"${len}-<hash>"`;
  });
}
