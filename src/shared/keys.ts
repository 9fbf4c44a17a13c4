/**
 * Parsing of the Solana, Algorand and Stellar keys the configuration holds: the server's settlement keys
 * (FACILITATOR_*) and the agent's wallets (WALLET_*). Each parser throws with a reason that never echoes the key.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { lazyRequire } from './lazy.js';

// Each chain SDK loads only when a key of its family is configured.
const solana = lazyRequire<typeof import('@solana/kit')>('@solana/kit');
const stellar = lazyRequire<typeof import('@stellar/stellar-sdk')>('@stellar/stellar-sdk');
const algorand = lazyRequire<typeof import('algosdk')>('algosdk');

const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

function ed25519PublicKey(seed: Uint8Array): Uint8Array {
  const key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const jwk = createPublicKey(key).export({ format: 'jwk' });
  return Buffer.from(jwk.x ?? '', 'base64url');
}

/** Parses a Solana keypair given as base58 (wallet export) or a JSON byte array (solana-keygen file); throws with a reason. */
export function parseSolanaSecretKey(text: string): Uint8Array {
  const trimmed = text.trim();
  let bytes: Uint8Array;
  if (trimmed.startsWith('[')) {
    const parsed: unknown = JSON.parse(trimmed);
    if (!Array.isArray(parsed) || !parsed.every((n) => Number.isInteger(n) && n >= 0 && n <= 255)) {
      throw new Error('must be a JSON array of bytes');
    }
    bytes = Uint8Array.from(parsed as number[]);
  } else {
    bytes = Uint8Array.from(solana().getBase58Encoder().encode(trimmed));
  }
  if (bytes.length !== 64) throw new Error(`must be a 64-byte keypair, got ${bytes.length} bytes`);
  const derived = ed25519PublicKey(bytes.slice(0, 32));
  if (Buffer.compare(Buffer.from(derived), Buffer.from(bytes.slice(32))) !== 0) {
    throw new Error('its public half does not belong to its secret half');
  }
  return bytes;
}

/** Parses a 25-word Algorand mnemonic into the account's 64-byte secret key; throws with a reason. */
export function parseAlgorandMnemonic(text: string): Uint8Array {
  return algorand().mnemonicToSecretKey(text.trim().split(/\s+/).join(' ')).sk;
}

/** Parses a Stellar secret seed; throws with a reason. */
export function parseStellarSecret(text: string): string {
  return stellar().Keypair.fromSecret(text.trim()).secret();
}

/** The 32 raw seed bytes of a Stellar secret seed (`S…`), to blank them in any encoding; throws with a reason. */
export function stellarSeedBytes(text: string): Uint8Array {
  return Uint8Array.from(stellar().StrKey.decodeEd25519SecretSeed(text.trim()));
}
