import fc from 'fast-check';
import { z } from 'zod';

/** A JSON Schema node, as zod's `toJSONSchema` writes it. */
type Schema = Record<string, unknown>;

/** Runs per property: FUZZ_RUNS overrides, FUZZ_SEED replays a failure (fast-check prints the seed when one fails). */
export function fuzzOptions(numRuns: number): { numRuns: number; seed?: number } {
  const runs = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : numRuns;
  return { numRuns: runs, ...(process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED) } : {}) };
}

/** The JSON Schema of a zod input type (the same derivation the transports publish). */
export function inputSchemaOf(type: z.ZodType): Schema {
  return z.toJSONSchema(type, { io: 'input', unrepresentable: 'any' }) as Schema;
}

function stringArbitrary(node: Schema): fc.Arbitrary<string> {
  const minLength = typeof node.minLength === 'number' ? node.minLength : 0;
  const maxLength = typeof node.maxLength === 'number' ? Math.min(node.maxLength, minLength + 80) : minLength + 40;
  if (typeof node.pattern === 'string') {
    try {
      return fc
        .stringMatching(new RegExp(node.pattern))
        .map((s) => (s.length > (node.maxLength as number) ? s.slice(0, node.maxLength as number) : s));
    } catch {
      /* a pattern fast-check cannot generate from: plain strings below */
    }
  }
  switch (node.format) {
    case 'email':
      return fc.emailAddress();
    case 'uri':
    case 'url':
      return fc.webUrl();
    case 'date-time':
      return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
    case 'uuid':
      return fc.uuid();
  }
  return fc.string({ minLength, maxLength });
}

function numberArbitrary(node: Schema, integer: boolean): fc.Arbitrary<number> {
  const lower = [node.minimum, node.exclusiveMinimum].filter((v): v is number => typeof v === 'number');
  const upper = [node.maximum, node.exclusiveMaximum].filter((v): v is number => typeof v === 'number');
  const min = lower.length ? Math.max(...lower) : -1e6;
  const max = upper.length ? Math.min(...upper) : 1e6;
  if (integer) {
    const lo = Math.max(Math.ceil(min), Number.MIN_SAFE_INTEGER);
    const hi = Math.min(Math.floor(max), Number.MAX_SAFE_INTEGER);
    return lo <= hi ? fc.integer({ min: lo, max: hi }) : fc.integer();
  }
  return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

/**
 * An arbitrary of values that are valid, or nearly so, for a JSON Schema: types, bounds, lengths, patterns, enums,
 * required and optional properties. Constraints it does not know make the value merely "valid-ish", which is fine:
 * the fuzz properties decide validity with the tool's own zod schema, never with this generator.
 */
export function arbitraryFor(node: Schema, root: Schema = node, depth = 0): fc.Arbitrary<unknown> {
  if (depth > 8) return fc.constant(null);
  if (typeof node.$ref === 'string' && node.$ref.startsWith('#/')) {
    const target = node.$ref
      .slice(2)
      .split('/')
      .reduce<unknown>((at, key) => (at as Schema | undefined)?.[key], root);
    return target ? arbitraryFor(target as Schema, root, depth + 1) : fc.jsonValue();
  }
  if ('const' in node) return fc.constant(node.const);
  if (Array.isArray(node.enum)) return fc.constantFrom(...(node.enum as unknown[]));
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(node[key]))
      return fc.oneof(...(node[key] as Schema[]).map((branch) => arbitraryFor(branch, root, depth + 1)));
  }
  if (Array.isArray(node.allOf) && node.allOf.length > 0) return arbitraryFor(node.allOf[0] as Schema, root, depth + 1);
  const type = Array.isArray(node.type) ? fc.constantFrom(...(node.type as string[])) : undefined;
  if (type) return type.chain((t) => arbitraryFor({ ...node, type: t }, root, depth + 1));
  switch (node.type) {
    case 'string':
      return stringArbitrary(node);
    case 'integer':
      return numberArbitrary(node, true);
    case 'number':
      return numberArbitrary(node, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const items =
        node.items && typeof node.items === 'object'
          ? arbitraryFor(node.items as Schema, root, depth + 1)
          : fc.jsonValue();
      const minLength = typeof node.minItems === 'number' ? node.minItems : 0;
      const maxLength = typeof node.maxItems === 'number' ? Math.min(node.maxItems, minLength + 8) : minLength + 5;
      return fc.array(items, { minLength, maxLength });
    }
    case 'object': {
      const properties = (node.properties ?? {}) as Record<string, Schema>;
      const required = Array.isArray(node.required) ? (node.required as string[]) : [];
      const model = Object.fromEntries(
        Object.entries(properties).map(([k, v]) => [k, arbitraryFor(v, root, depth + 1)]),
      );
      return fc.record(model, { requiredKeys: required.filter((k) => k in model) });
    }
  }
  return fc.jsonValue({ maxDepth: 3 });
}

/** Values that break assumptions: wrong types, extremes, hostile strings and keys. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    null,
    true,
    false,
    0,
    -0,
    -1,
    1e308,
    -1e308,
    2 ** 53 + 2,
    0.1 + 0.2,
    '',
    ' ',
    '0',
    'NaN',
    'Infinity',
    '-1',
    'null',
    'undefined',
    'true',
    '[]',
    '{}',
  ),
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    'hasOwnProperty',
    '$where',
    '<script>alert(1)</script>',
    "' OR 1=1 --",
    '../../etc/passwd',
    '\u0000',
    '\uffff',
    '\ud800',
    'é'.normalize('NFD'),
  ),
  fc.string({ unit: 'binary', maxLength: 64 }),
  fc.integer({ min: 1, max: 20_000 }).map((n) => 'x'.repeat(n)),
  fc.jsonValue({ maxDepth: 4 }),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 5 }),
);

/** Keys an attacker adds to objects. */
export const hostileKey = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', '', ' ', 'toString', 'valueOf', 'x'.repeat(300)),
  fc.string({ maxLength: 20 }),
);

/** A mutation of a (valid-ish) value: drop a key, replace one with a hostile value, add a hostile key, or change its shape. */
export function mutated(base: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc
    .tuple(base, fc.nat(), hostileValue, hostileKey, fc.constantFrom('drop', 'replace', 'add', 'wrap', 'primitive'))
    .map(([value, pick, hostile, key, how]) => {
      if (typeof value !== 'object' || value === null || Array.isArray(value) || how === 'primitive')
        return how === 'wrap' ? [value] : hostile;
      const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
      const keys = Object.keys(copy);
      const at = keys.length > 0 ? keys[pick % keys.length]! : undefined;
      switch (how) {
        case 'drop':
          if (at !== undefined) delete copy[at];
          return copy;
        case 'replace':
          if (at !== undefined) copy[at] = hostile;
          else copy[String(key)] = hostile;
          return copy;
        case 'add':
          Object.defineProperty(copy, String(key), {
            value: hostile,
            enumerable: true,
            configurable: true,
            writable: true,
          });
          return copy;
        default:
          return [copy];
      }
    });
}

/** A request body as raw bytes plus the content type it claims, and a label saying how it was made. */
export interface RawBody {
  kind: string;
  bytes: Buffer;
  contentType: string;
}

const json = (kind: string, value: unknown, contentType = 'application/json'): RawBody => ({
  kind,
  bytes: Buffer.from(JSON.stringify(value) ?? 'null', 'utf8'),
  contentType,
});
const text = (kind: string, value: string, contentType = 'application/json'): RawBody => ({
  kind,
  bytes: Buffer.from(value, 'utf8'),
  contentType,
});

/** Bodies for a route whose input has the given JSON Schema: valid-ish, mutated, random and hostile. */
export function hostileBody(schema: Schema, limitBytes: number): fc.Arbitrary<RawBody> {
  const validish = arbitraryFor(schema);
  return fc.oneof(
    { weight: 4, arbitrary: validish.map((v) => json('valid-ish', v)) },
    { weight: 4, arbitrary: mutated(validish).map((v) => json('mutated', v)) },
    { weight: 2, arbitrary: fc.jsonValue().map((v) => json('random JSON', v)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }).map((s) => text('random text', s)) },
    {
      weight: 1,
      arbitrary: fc
        .uint8Array({ maxLength: 200 })
        .map((b) => ({ kind: 'random bytes', bytes: Buffer.from(b), contentType: 'application/json' })),
    },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: limitBytes - 64, max: limitBytes + 4096 })
        .map((n) => text('huge string', JSON.stringify({ s: 'a'.repeat(Math.max(0, n)) }))),
    },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 50, max: 30_000 }).map((d) => text('deep arrays', '['.repeat(d) + ']'.repeat(d))),
    },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 50, max: 8_000 })
        .map((d) => text('deep objects', '{"a":'.repeat(d) + '1' + '}'.repeat(d))),
    },
    {
      weight: 2,
      arbitrary: validish.map((v) => {
        const fields = typeof v === 'object' && v !== null && !Array.isArray(v) ? JSON.stringify(v).slice(1, -1) : '';
        const pollution = '"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}';
        return text('prototype pollution', `{${pollution}${fields ? ',' + fields : ''}}`);
      }),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.uint8Array({ minLength: 1, maxLength: 40 }).map((b) => Buffer.from(b.map((x) => 0x80 | x))),
          fc.constantFrom('s', 'source', 'number', 'password', 'coin'),
        )
        .map(([bad, key]) => ({
          kind: 'invalid UTF-8',
          bytes: Buffer.concat([Buffer.from(`{"${key}":"`), bad, Buffer.from('"}')]),
          contentType: 'application/json',
        })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          validish,
          fc.constantFrom(
            'text/plain',
            'application/x-www-form-urlencoded',
            'multipart/form-data; boundary=x',
            'application/json; charset=utf-16',
            'application/json; charset=latin1',
            'application/json; charset=nope',
            'application/xml',
            'image/png',
            '',
          ),
        )
        .map(([v, type]) => json(`content type "${type}"`, v, type)),
    },
  );
}

/** The string with lone surrogates replaced by U+FFFD (what a URL can carry). */
export function wellFormed(s: string): string {
  return s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

/** Query strings: valid-ish for the schema, mutated, random and hostile (bad escapes, repeated keys, huge). */
export function hostileQuery(schema: Schema): fc.Arbitrary<string> {
  const validish = arbitraryFor(schema);
  const enc = (s: string) => encodeURIComponent(wellFormed(s));
  const encode = (v: unknown) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return `v=${enc(JSON.stringify(v) ?? '')}`;
    return Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${enc(k)}=${enc(typeof x === 'string' ? x : (JSON.stringify(x) ?? ''))}`)
      .join('&');
  };
  return fc.oneof(
    { weight: 4, arbitrary: validish.map(encode) },
    { weight: 4, arbitrary: mutated(validish).map(encode) },
    { weight: 2, arbitrary: fc.dictionary(hostileKey, fc.string({ maxLength: 30 }), { maxKeys: 6 }).map(encode) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '%',
        '%zz',
        '%ff%fe',
        'a=%E0%A4%A',
        'a&a&a',
        '=',
        '&&&',
        'a=1&a=2&a=3',
        'a[b]=c',
        'a[]=1&a[]=2',
        '__proto__=x',
        'constructor[prototype][polluted]=yes',
        '__proto__[polluted]=yes',
        '+',
        '%00=%00',
      ),
    },
    { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 12_000 }).map((n) => `q=${'x'.repeat(n)}`) },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 10, max: 2_000 })
        .map((n) => Array.from({ length: n }, (_, i) => `k${i}=${i}`).join('&')),
    },
  );
}
