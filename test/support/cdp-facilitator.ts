import { generateKeyPairSync, verify, type KeyObject } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { startLookalikeFacilitator, type LookalikeFacilitator, type LookalikeOptions } from './facilitator.js';

/** Where the Coinbase Developer Platform serves its facilitator, under the API's origin. */
export const CDP_FACILITATOR_PATH = '/platform/v2/x402';

/** A CDP Secret API key made for one test: the secret as the CDP portal hands it out, and its public half. */
export interface TestCdpKey {
  keyId: string;
  /** CDP_API_KEY_SECRET: an EC key as PEM (ES256), or an Ed25519 key as base64 of seed and public key (EdDSA). */
  secret: string;
  publicKey: KeyObject;
}

/** Generates a CDP Secret API key of either type, with an id shaped like the portal's. */
export function generateCdpKey(type: 'ec' | 'ed25519', keyId = 'organizations/test-org/apiKeys/test-key'): TestCdpKey {
  if (type === 'ec') {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    return { keyId, secret: privateKey.export({ format: 'pem', type: 'sec1' }).toString(), publicKey };
  }
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(-32);
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return { keyId, secret: Buffer.concat([seed, raw]).toString('base64'), publicKey };
}

const segment = (text: string): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Checks a request's `Authorization: Bearer <JWT>` as the CDP API does: the algorithm of the key's type (ES256 for
 * EC, EdDSA for Ed25519), `kid` = the key id, a nonce never seen before, `iss` "cdp", `sub` = the key id, `nbf`/`exp`
 * around now and at most 120 s apart, `uris` = ["<METHOD> <host><path>"] of this very request, and the signature
 * verified against the key's public half. Returns why it is refused, or undefined when it passes.
 */
export function cdpJwtCheck(
  key: Pick<TestCdpKey, 'keyId' | 'publicKey'>,
): (request: { method: string; host: string; path: string; headers: IncomingHttpHeaders }) => string | undefined {
  const nonces = new Set<string>();
  const alg = key.publicKey.asymmetricKeyType === 'ed25519' ? 'EdDSA' : 'ES256';
  return ({ method, host, path, headers }) => {
    const match = /^Bearer ([\w-]+)\.([\w-]+)\.([\w-]+)$/.exec(headers.authorization ?? '');
    if (!match) return 'missing or malformed bearer token';
    const [, head, body, signature] = match as unknown as [string, string, string, string];
    const header = segment(head);
    const claims = segment(body);
    if (!header || !claims) return 'unreadable token';
    if (header.alg !== alg) return `algorithm must be ${alg}`;
    if (header.kid !== key.keyId) return 'unknown key id';
    if (typeof header.nonce !== 'string' || header.nonce.length < 16 || nonces.has(header.nonce))
      return 'missing or reused nonce';
    const signed = Buffer.from(`${head}.${body}`);
    const sig = Buffer.from(signature, 'base64url');
    const valid =
      alg === 'EdDSA'
        ? verify(null, signed, key.publicKey, sig)
        : verify('sha256', signed, { key: key.publicKey, dsaEncoding: 'ieee-p1363' }, sig);
    if (!valid) return 'bad signature';
    const now = Math.floor(Date.now() / 1000);
    if (claims.iss !== 'cdp' || claims.sub !== key.keyId) return 'wrong issuer or subject';
    if (typeof claims.nbf !== 'number' || typeof claims.exp !== 'number') return 'missing nbf or exp';
    if (claims.nbf > now + 5 || claims.exp <= now || claims.exp - claims.nbf > 120) return 'token not valid now';
    const uris = claims.uris;
    if (!Array.isArray(uris) || uris.length !== 1 || uris[0] !== `${method} ${host}${path}`)
      return 'token is not bound to this request';
    nonces.add(header.nonce);
    return undefined;
  };
}

/** A CDP look-alike facilitator: the standard look-alike under /platform/v2/x402 that refuses requests without a valid CDP JWT. */
export function startCdpLookalike(
  opts: Omit<LookalikeOptions, 'basePath' | 'authorize'>,
  key: Pick<TestCdpKey, 'keyId' | 'publicKey'>,
): Promise<LookalikeFacilitator> {
  return startLookalikeFacilitator({ ...opts, basePath: CDP_FACILITATOR_PATH, authorize: cdpJwtCheck(key) });
}
