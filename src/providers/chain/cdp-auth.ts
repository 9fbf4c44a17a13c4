/**
 * Bearer JWTs for the Coinbase Developer Platform REST API
 * (docs/spec-notes.md#coinbase-developer-platform-keys-and-faucet): one short-lived token per request, signed with a
 * CDP Secret API key — ES256 for EC keys (PEM), EdDSA for Ed25519 keys (base64 of the 64-byte seed + public key).
 * Signed with node:crypto; the key never leaves the KeyObject and is never logged.
 */
import { createPrivateKey, randomBytes, sign, type KeyObject } from 'node:crypto';

/** A parsed CDP Secret API key and its id (`organizations/…/apiKeys/…` or a UUID). */
export interface CdpCredentials {
  keyId: string;
  key: KeyObject;
}

const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** Parses a CDP Secret API key (EC PEM or base64 Ed25519); throws with a reason that never echoes the key. */
export function parseCdpSecret(secret: string): KeyObject {
  const text = secret.trim().replace(/\\n/g, '\n');
  if (text.startsWith('-----BEGIN')) {
    try {
      const key = createPrivateKey({ key: text, format: 'pem' });
      if (key.asymmetricKeyType !== 'ec') throw new Error('not an EC key');
      return key;
    } catch {
      throw new Error('CDP_API_KEY_SECRET is a PEM block but not a readable EC private key');
    }
  }
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length !== 64 && bytes.length !== 32) {
    throw new Error('CDP_API_KEY_SECRET must be an EC private key (PEM) or a base64 Ed25519 key (64 bytes)');
  }
  return createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, bytes.subarray(0, 32)]),
    format: 'der',
    type: 'pkcs8',
  });
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A CDP JWT for one request (`uris: ["POST api.cdp.coinbase.com/platform/v2/evm/faucet"]`), valid for 120 s. */
export function cdpJwt(
  credentials: CdpCredentials,
  method: string,
  url: string,
  now = Math.floor(Date.now() / 1000),
): string {
  const { host, pathname } = new URL(url);
  const ed25519 = credentials.key.asymmetricKeyType === 'ed25519';
  const header = {
    alg: ed25519 ? 'EdDSA' : 'ES256',
    kid: credentials.keyId,
    typ: 'JWT',
    nonce: randomBytes(16).toString('hex'),
  };
  const claims = {
    iss: 'cdp',
    sub: credentials.keyId,
    // Coinbase's own SDK always sets iat (jose's setIssuedAt), and the platform may require it.
    iat: now,
    nbf: now,
    exp: now + 120,
    uris: [`${method} ${host}${pathname}`],
  };
  const signingInput = `${b64url(header)}.${b64url(claims)}`;
  const signature = ed25519
    ? sign(null, Buffer.from(signingInput), credentials.key)
    : sign('sha256', Buffer.from(signingInput), { key: credentials.key, dsaEncoding: 'ieee-p1363' });
  return `${signingInput}.${signature.toString('base64url')}`;
}
