/**
 * Blanks secrets out of text in any form a facilitator, an upstream, a seller or a library may echo them in: raw,
 * JSON-escaped, URL-encoded, hex, base64 and base64url (at any byte offset, as inside `Basic base64(user:secret)`), the
 * part after a `Bearer`/`Basic` scheme word and the decoded `user:password` of a Basic value, and any prefix of 8
 * characters or more of each of these. A secret given as bytes (a parsed wallet key) is also blanked as hex (with or
 * without spaces), base64, base58 and as a JSON byte array. The server's and the agent's loggers run every line through it.
 */
import type { Logger } from './log.js';

const MARK = '[redacted]';
/** Shortest secret blanked whole; shorter values (a flag, a port) would blank ordinary words. */
const MIN_SECRET = 6;
/** Shortest prefix of a secret's form that is blanked. */
const MIN_PREFIX = 8;

/** The base64 of `bytes` at each of the three byte offsets it may sit at inside a longer text, cut to the stable part. */
function base64AtOffsets(bytes: Buffer): string[] {
  const out: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const padded = Buffer.concat([Buffer.alloc(offset), bytes]);
    const text = padded.toString('base64');
    const start = Math.ceil((offset * 8) / 6);
    const end = Math.floor((padded.length * 8) / 6);
    const stable = text.slice(start, end);
    out.push(stable, stable.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return out;
}

/** The parts of a credential worth blanking on their own: after a scheme word, and a Basic value's decoded parts. */
function credentialParts(secret: string): string[] {
  const parts = [secret];
  const scheme = /^(Bearer|Basic|Token|Bot)\s+(\S+)$/i.exec(secret.trim());
  if (scheme) {
    parts.push(scheme[2]!);
    if (scheme[1]!.toLowerCase() === 'basic') {
      const decoded = Buffer.from(scheme[2]!, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon > 0) parts.push(decoded, decoded.slice(colon + 1));
    }
  }
  // A PEM key: its base64 lines.
  for (const line of secret.split(/\r?\n/)) if (line.length >= 16 && !line.startsWith('-----')) parts.push(line);
  if (/^0x[0-9a-fA-F]+$/.test(secret)) parts.push(secret.slice(2));
  return parts;
}

/** Every form of one secret that may be echoed (see the module comment); forms shorter than MIN_SECRET are dropped. */
function secretForms(secret: string): Array<{ text: string; anyCase: boolean }> {
  const forms: Array<{ text: string; anyCase: boolean }> = [];
  for (const part of credentialParts(secret)) {
    if (part.length < MIN_SECRET) continue;
    const bytes = Buffer.from(part, 'utf8');
    forms.push({ text: part, anyCase: /^[0-9a-fA-F]+$/.test(part) });
    for (const text of [JSON.stringify(part).slice(1, -1), encodeURIComponent(part), ...base64AtOffsets(bytes)])
      forms.push({ text, anyCase: false });
    forms.push({ text: bytes.toString('hex'), anyCase: true });
  }
  const seen = new Set<string>();
  return forms.filter((f) => f.text.length >= MIN_SECRET && !seen.has(f.text) && seen.add(f.text));
}

/** A secret to blank: a configured text, the bytes of a parsed key, or the words of a mnemonic (however spaced). */
export type Secret = string | Uint8Array | { words: readonly string[] };

/** What separates a mnemonic's words when echoed: spaces, line breaks (also JSON-escaped), commas, quotes, brackets. */
const WORD_GAP = String.raw`(?:[\s,;"'\[\]]|\\[nrt])+`;

/** A pattern matching a mnemonic's first two words and as many of the following as come, in order, however separated. */
function phrasePattern(words: readonly string[]): RegExp | undefined {
  const escaped = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  if (escaped.length < 2) return undefined;
  let tail = '';
  for (let i = escaped.length - 1; i >= 2; i--) tail = `(?:${WORD_GAP}${escaped[i]}${tail})?`;
  return new RegExp(`\\b${escaped[0]}${WORD_GAP}${escaped[1]}${tail}\\b`, 'gi');
}

/** Shortest byte secret blanked (a key or a seed; fewer bytes would blank ordinary data). */
const MIN_SECRET_BYTES = 16;
const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** The Bitcoin-alphabet base58 of `bytes` (Solana keys, Stellar-like exports). */
function base58(bytes: Uint8Array): string {
  const digits: number[] = [];
  for (const byte of bytes) {
    let carry = byte;
    for (let i = 0; i < digits.length; i++) {
      carry += digits[i]! * 256;
      digits[i] = carry % 58;
      carry = Math.floor(carry / 58);
    }
    for (; carry > 0; carry = Math.floor(carry / 58)) digits.push(carry % 58);
  }
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  return (
    '1'.repeat(zeros) +
    digits
      .reverse()
      .map((d) => BASE58[d])
      .join('')
  );
}

/** Every form of a byte secret that may be echoed: hex (also byte by byte), base64 at any offset, base58, JSON arrays. */
function byteForms(bytes: Uint8Array): Array<{ text: string; anyCase: boolean }> {
  if (bytes.length < MIN_SECRET_BYTES) return [];
  const buffer = Buffer.from(bytes);
  const list = Array.from(bytes);
  return [
    { text: buffer.toString('hex'), anyCase: true },
    { text: list.map((b) => b.toString(16).padStart(2, '0')).join(' '), anyCase: true },
    ...base64AtOffsets(buffer).map((text) => ({ text, anyCase: false })),
    { text: base58(bytes), anyCase: false },
    { text: list.join(','), anyCase: false },
    { text: list.join(', '), anyCase: false },
  ];
}

/** A form as it is searched for: lower-cased when any case matches, and the head every match starts with. */
interface Needle {
  anyCase: boolean;
  needle: string;
  head: string;
}

/** The needle of one form (computed once per secret, not per line). */
function needleOf(form: { text: string; anyCase: boolean }): Needle {
  const needle = form.anyCase ? form.text.toLowerCase() : form.text;
  return { anyCase: form.anyCase, needle, head: needle.slice(0, Math.min(MIN_PREFIX, needle.length)) };
}

/**
 * Replaces every run of `text` that starts with MIN_PREFIX characters of the form and follows it, by MARK; `haystack`
 * is `text`, lower-cased for a form matched in any case.
 */
function blank(text: string, haystack: string, { needle, head }: Needle): string {
  let at = haystack.indexOf(head);
  if (at < 0) return text;
  let out = '';
  let from = 0;
  while (at >= 0) {
    let length = head.length;
    while (length < needle.length && haystack[at + length] === needle[length]) length++;
    // A secret shorter than MIN_PREFIX is blanked only whole.
    if (length === needle.length || length >= MIN_PREFIX) {
      out += text.slice(from, at) + MARK;
      from = at + length;
    }
    at = haystack.indexOf(head, at + length);
  }
  return out + text.slice(from);
}

/** Blanks configured credentials out of text (see the module comment). */
export class Redactor {
  private readonly forms: Needle[];
  private readonly phrases: RegExp[];
  /** The shortest text any form can match in: shorter strings (most log fields) are left as they are at once. */
  private readonly shortest: number;

  constructor(secrets: readonly Secret[]) {
    this.phrases = secrets.flatMap((s) => {
      const pattern = typeof s === 'object' && 'words' in s ? phrasePattern(s.words) : undefined;
      return pattern ? [pattern] : [];
    });
    const forms = secrets.flatMap((s) =>
      typeof s === 'string' ? secretForms(s) : s instanceof Uint8Array ? byteForms(s) : [],
    );
    const seen = new Set<string>();
    // Longest first, so a longer form is blanked before a shorter one cuts into it.
    this.forms = forms
      .filter((f) => !seen.has(f.text) && seen.add(f.text))
      .sort((a, b) => b.text.length - a.text.length)
      .map(needleOf);
    this.shortest = Math.min(...this.forms.map((f) => f.head.length));
  }

  /** `text` with every form of every secret (and their prefixes of 8 characters or more) blanked. */
  redact(text: string): string {
    let out = text;
    for (const phrase of this.phrases) out = out.replace(phrase, MARK);
    if (out.length < this.shortest) return out;
    // Lower-cased once per text, again only after a form changed it.
    let lower: string | undefined;
    for (const form of this.forms) {
      const haystack = form.anyCase ? (lower ??= out.toLowerCase()) : out;
      const blanked = blank(out, haystack, form);
      if (blanked === out) continue;
      out = blanked;
      lower = undefined;
    }
    return out;
  }

  /** A copy of `value` with every string in it redacted (objects and arrays to a depth of 6; errors by their message). */
  deep(value: unknown, depth = 0): unknown {
    if (typeof value === 'string') return this.redact(value);
    if (value instanceof Error) return { name: value.name, message: this.redact(value.message) };
    if (value === null || typeof value !== 'object' || depth > 6) return value;
    if (Array.isArray(value)) return value.map((v) => this.deep(v, depth + 1));
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.deep(v, depth + 1)]));
  }
}

/** The variables whose values are credentials (FACILITATOR_HEADERS is read by the server for its header values). */
const SECRET_ENV =
  /(^|_)(KEY|KEYS|SECRET|TOKEN|PASSWORD|PASSPHRASE|MNEMONIC|PRIVATE_KEY|SECRET_KEY|KEY_ID|KEY_SECRET|HEADERS)$/;
const URL_ENV = /(_URL|_URLS)$/;

/** The credentials one environment variable holds: a secret-named one's value, a URL one's secret parts, else none. */
export function variableSecrets(name: string, value: string): string[] {
  if (SECRET_ENV.test(name)) return [value];
  if (URL_ENV.test(name) || name === 'DATABASE_URL') return urlSecrets(value);
  return [];
}

/** A URL's password, query values and long path segments (an API key in the path, as RPC providers put it). */
export function urlSecrets(list: string): string[] {
  const out: string[] = [];
  for (const text of list.split(/[\s,]+/)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      continue;
    }
    if (url.password) out.push(decodeURIComponent(url.password));
    for (const value of url.searchParams.values()) if (value.length >= 16) out.push(value);
    for (const segment of url.pathname.split('/')) if (segment.length >= 20) out.push(decodeURIComponent(segment));
  }
  return out;
}

/** A logger that redacts the configured credentials out of every message and field before `log` writes them. */
export function redactingLogger(log: Logger, redactor: Redactor): Logger {
  const clean = (msg: string, fields?: Record<string, unknown>) =>
    [redactor.redact(msg), fields && (redactor.deep(fields) as Record<string, unknown>)] as const;
  return {
    info: (msg, fields) => log.info(...clean(msg, fields)),
    warn: (msg, fields) => log.warn(...clean(msg, fields)),
    error: (msg, fields) => log.error(...clean(msg, fields)),
  };
}
