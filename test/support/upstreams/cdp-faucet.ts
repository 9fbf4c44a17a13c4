import { createPublicKey, generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import {
  startLookalikeServer,
  type Lookalike,
  type LookalikeOptions,
  type LookalikeReply,
  type LookalikeRequest,
} from './server.js';

/** A CDP Secret API key made for a test: the id, the secret as CDP_API_KEY_SECRET takes it, and its public key. */
export interface CdpTestKey {
  keyId: string;
  secret: string;
  publicKey: KeyObject;
}

/** Generates a CDP-style key: an EC P-256 key as SEC1 PEM (ES256) or an Ed25519 key as base64 seed + public key (EdDSA). */
export function cdpTestKey(kind: 'ec' | 'ed25519'): CdpTestKey {
  const keyId = `organizations/test-org/apiKeys/${randomBytes(8).toString('hex')}`;
  if (kind === 'ec') {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    return { keyId, secret: privateKey.export({ type: 'sec1', format: 'pem' }).toString(), publicKey };
  }
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = privateKey.export({ format: 'jwk' });
  const bytes = Buffer.concat([Buffer.from(jwk.d ?? '', 'base64url'), Buffer.from(jwk.x ?? '', 'base64url')]);
  return { keyId, secret: bytes.toString('base64'), publicKey: createPublicKey(privateKey) };
}

/** One drip the look-alike sent. */
export interface CdpDrip {
  chain: 'evm' | 'solana';
  network: string;
  address: string;
  token: string;
  transaction: string;
}

/** Options of the CDP look-alike. */
export interface CdpLookalikeOptions extends LookalikeOptions {
  /** Drips per address and token before 429 `faucet_limit_exceeded` (the rolling 24-hour cap); default 10. */
  capPerAddress?: number;
  /** Addresses the faucet refuses with 403 `forbidden`. */
  refused?: string[];
}

/** The CDP platform look-alike: faucet drips and onramp sessions it answered, and the requests whose JWT it refused. */
export interface CdpLookalike extends Lookalike {
  drips: CdpDrip[];
  sessions: Array<{ destinationAddress: string; url: string }>;
  unauthorized: number;
}

const EVM = /^0x[0-9a-fA-F]{40}$/;
const SOLANA = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const base58 = getBase58Decoder();

function cdpError(status: number, errorType: string, errorMessage: string): LookalikeReply {
  return {
    status,
    json: {
      errorType,
      errorMessage,
      correlationId: randomBytes(8).toString('hex'),
      errorLink: `https://docs.cdp.coinbase.com/api-reference/v2/errors#${errorType}`,
    },
  };
}

/** Checks a CDP bearer JWT the way the platform does: signature, issuer, subject/kid, iat, validity window and the URI claim. */
function verifyJwt(
  req: LookalikeRequest,
  header: string | undefined,
  key: CdpTestKey,
  host: string,
): string | undefined {
  const token = header?.startsWith('Bearer ') ? header.slice(7) : undefined;
  if (!token) return 'missing bearer token';
  const [h, p, s] = token.split('.');
  if (!h || !p || !s) return 'malformed JWT';
  const head = JSON.parse(Buffer.from(h, 'base64url').toString()) as { alg: string; kid: string; nonce?: string };
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as {
    iss: string;
    sub: string;
    iat?: number;
    nbf: number;
    exp: number;
    uris: string[];
  };
  const data = Buffer.from(`${h}.${p}`);
  const ok =
    head.alg === 'EdDSA'
      ? verify(null, data, key.publicKey, Buffer.from(s, 'base64url'))
      : verify('sha256', data, { key: key.publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'));
  if (!ok) return 'bad signature';
  const now = Math.floor(Date.now() / 1000);
  if (claims.iss !== 'cdp' || claims.sub !== key.keyId || head.kid !== key.keyId || !head.nonce)
    return 'wrong issuer, subject or kid';
  // Coinbase's SDK always sets iat; a token without it (or issued in the future) is refused.
  if (typeof claims.iat !== 'number' || claims.iat > now + 5) return 'missing or future iat';
  if (claims.nbf > now + 5 || claims.exp < now) return 'expired';
  if (!claims.uris.includes(`${req.method} ${host}${req.path}`))
    return `uri claim does not cover ${req.method} ${req.path}`;
  return undefined;
}

/** What the faucet counts and records across calls. */
interface FaucetState {
  counts: Map<string, number>;
  cap: number;
  refused: readonly string[];
  drips: CdpDrip[];
}

type FaucetBody = { network?: string; address?: string; token?: string };

/** One faucet request of `chain`: refused as the platform refuses it, or a drip recorded with a fresh transaction. */
function drip(state: FaucetState, chain: 'evm' | 'solana', body: FaucetBody): LookalikeReply {
  const { address = '', token = '' } = body;
  const network = chain === 'evm' ? (body.network ?? '') : 'solana-devnet';
  const tokens = chain === 'evm' ? ['eth', 'usdc', 'eurc', 'cbbtc'] : ['sol', 'usdc', 'cbtusd'];
  if (chain === 'evm' && !['base-sepolia', 'ethereum-sepolia', 'ethereum-hoodi'].includes(network))
    return cdpError(400, 'invalid_request', 'network is not supported');
  if (!(chain === 'evm' ? EVM : SOLANA).test(address))
    return cdpError(400, 'invalid_request', 'address does not match the required pattern');
  if (!tokens.includes(token)) return cdpError(400, 'invalid_request', 'token is not supported');
  if (state.refused.includes(address)) return cdpError(403, 'forbidden', 'address is not allowed to use the faucet');
  const counter = `${chain}:${address.toLowerCase()}:${token}`;
  const used = state.counts.get(counter) ?? 0;
  if (used >= state.cap)
    return cdpError(
      429,
      'faucet_limit_exceeded',
      'Faucet limit reached for this address and token in the last 24 hours',
    );
  state.counts.set(counter, used + 1);
  const transaction = chain === 'evm' ? `0x${randomBytes(32).toString('hex')}` : base58.decode(randomBytes(64));
  state.drips.push({ chain, network, address, token, transaction });
  return { json: chain === 'evm' ? { transactionHash: transaction } : { transactionSignature: transaction } };
}

/**
 * Starts the CDP platform look-alike (`/v2/evm/faucet`, `/v2/solana/faucet`, `/v2/onramp/sessions`) for one API key.
 * `failNext('429')` answers the faucet's project-wide rolling cap (`faucet_limit_exceeded`) unless `rateLimitBody` says
 * otherwise (e.g. an ordinary `rate_limit_exceeded`).
 */
export async function startCdpLookalike(key: CdpTestKey, options: CdpLookalikeOptions = {}): Promise<CdpLookalike> {
  const drips: CdpDrip[] = [];
  const sessions: CdpLookalike['sessions'] = [];
  const counts = new Map<string, number>();
  const cap = options.capPerAddress ?? 10;
  let unauthorized = 0;
  let host = '';
  const state: FaucetState = { counts, cap, refused: options.refused ?? [], drips };
  const faucet = (chain: 'evm' | 'solana', body: FaucetBody) => drip(state, chain, body);

  const server = await startLookalikeServer(
    (req, mode) => {
      const header = req.headers.authorization;
      const refused = verifyJwt(req, typeof header === 'string' ? header : undefined, key, host);
      if (refused) {
        unauthorized += 1;
        return cdpError(401, 'unauthorized', refused);
      }
      if (mode === 'error200') return cdpError(500, 'internal_server_error', 'look-alike failure');
      const body = (req.body ?? {}) as Record<string, string>;
      if (req.method === 'POST' && req.path === '/v2/evm/faucet') return faucet('evm', body);
      if (req.method === 'POST' && req.path === '/v2/solana/faucet') return faucet('solana', body);
      if (req.method === 'POST' && req.path === '/v2/onramp/sessions') {
        if (!body.destinationAddress || !body.purchaseCurrency || !body.destinationNetwork)
          return cdpError(
            400,
            'invalid_request',
            'destinationAddress, purchaseCurrency and destinationNetwork are required',
          );
        const url = `https://pay.coinbase.com/buy?sessionToken=${randomBytes(24).toString('base64url')}`;
        sessions.push({ destinationAddress: body.destinationAddress, url });
        return { status: 201, json: { session: { onrampUrl: url } } };
      }
      return cdpError(404, 'not_found', `no route ${req.method} ${req.path}`);
    },
    {
      rateLimitBody: {
        errorType: 'faucet_limit_exceeded',
        errorMessage: 'Faucet limit reached for this project in the last 24 hours',
      },
      ...options,
    },
  );
  host = new URL(server.url).host;
  return Object.defineProperties(server, {
    drips: { value: drips },
    sessions: { value: sessions },
    unauthorized: { get: () => unauthorized },
  }) as CdpLookalike;
}
