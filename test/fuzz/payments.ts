import fc from 'fast-check';
import { hostileValue } from './arbitraries.js';

/** Printable ASCII, the characters an HTTP header value can carry. */
const headerChar = fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c));

/** JSON with every character outside printable ASCII escaped, so it fits in an HTTP header. */
function asciiJson(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Payment header values that are not a valid payment: random text and base64, near-miss JSON, oversize. */
export function hostilePaymentHeader(nearMisses: fc.Arbitrary<unknown>): fc.Arbitrary<{ kind: string; value: string }> {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v) ?? 'null', 'utf8').toString('base64');
  return fc.oneof(
    {
      weight: 2,
      arbitrary: fc.string({ unit: headerChar, maxLength: 200 }).map((value) => ({ kind: 'random text', value })),
    },
    {
      weight: 2,
      arbitrary: fc
        .uint8Array({ maxLength: 300 })
        .map((b) => ({ kind: 'random base64', value: Buffer.from(b).toString('base64') })),
    },
    { weight: 2, arbitrary: fc.jsonValue().map((v) => ({ kind: 'random JSON in base64', value: b64(v) })) },
    { weight: 6, arbitrary: nearMisses.map((v) => ({ kind: 'almost a PaymentPayload', value: b64(v) })) },
    {
      weight: 1,
      arbitrary: nearMisses.map((v) => ({ kind: 'almost a PaymentPayload, raw JSON', value: asciiJson(v) })),
    },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 8_000, max: 15_000 }).map((n) => ({ kind: 'oversize', value: 'A'.repeat(n) })),
    },
  );
}

/**
 * `replacement`, unless it means the same as `original` (a mutation must change something): equal JSON, or a number
 * written for the same decimal string (`0` for `"0"`), which an EIP-3009 authorization accepts as the same uint256.
 */
function differentFrom(original: unknown, replacement: unknown): unknown {
  const same =
    JSON.stringify(original) === JSON.stringify(replacement) ||
    (typeof original === 'string' && typeof replacement === 'number' && String(replacement) === original);
  return same ? { replaced: replacement } : replacement;
}

/** A mutation of a real, signed payment that makes it invalid (every change touches a signed or matched field). */
export function nearMissPayment(signed: Record<string, unknown>): fc.Arbitrary<unknown> {
  const clone = () =>
    structuredClone(signed) as {
      x402Version: unknown;
      accepted: Record<string, unknown>;
      payload: { signature: string; authorization: Record<string, unknown> };
    } & Record<string, unknown>;
  const flipHex = (hex: string, at: number) => {
    const i = 2 + (at % (hex.length - 2));
    return hex.slice(0, i) + (hex[i] === '0' ? '1' : '0') + hex.slice(i + 1);
  };
  return fc
    .tuple(
      fc.nat(),
      hostileValue,
      fc.constantFrom(
        'signature',
        'value',
        'to',
        'from',
        'nonce',
        'validBefore',
        'network',
        'scheme',
        'asset',
        'amount',
        'payTo',
        'version',
        'drop-payload',
        'drop-accepted',
        'hostile-auth',
        'hostile-accepted',
        'array',
      ),
    )
    .map(([at, hostile, how]) => {
      const p = clone();
      const auth = p.payload.authorization;
      switch (how) {
        case 'signature':
          p.payload.signature = flipHex(p.payload.signature, at);
          break;
        case 'value':
          auth.value = String(BigInt(auth.value as string) + 1n + BigInt(at));
          break;
        case 'to':
        case 'from':
        case 'nonce':
          auth[how] = flipHex(auth[how] as string, at);
          break;
        case 'validBefore':
          auth.validBefore = String(Math.floor(Date.now() / 1000) - 1 - (at % 100_000));
          break;
        case 'network':
          p.accepted.network = `eip155:${900_000 + (at % 100_000)}`;
          break;
        case 'scheme':
          p.accepted.scheme = at % 2 ? 'upto' : 'exactly';
          break;
        case 'asset':
        case 'payTo':
          p.accepted[how] = flipHex(p.accepted[how] as string, at);
          break;
        case 'amount':
          p.accepted.amount = String(at % 1000);
          break;
        case 'version':
          p.x402Version = at % 2 ? 1 : differentFrom(2, hostile);
          break;
        case 'drop-payload':
          delete (p as Record<string, unknown>).payload;
          break;
        case 'drop-accepted':
          delete (p as Record<string, unknown>).accepted;
          break;
        case 'hostile-auth': {
          const key = Object.keys(auth)[at % Object.keys(auth).length]!;
          auth[key] = differentFrom(auth[key], hostile);
          break;
        }
        case 'hostile-accepted': {
          const key = Object.keys(p.accepted)[at % Object.keys(p.accepted).length]!;
          p.accepted[key] = differentFrom(p.accepted[key], hostile);
          break;
        }
        case 'array':
          return [p];
      }
      return p;
    });
}
