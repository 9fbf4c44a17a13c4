import { createHash, type Hash } from 'node:crypto';
import { randomText } from '../random-pool.js';
import type { PaymentRequirements } from '@x402/core/types';
import type { Challenge } from 'mppx';
import { checksumAddress } from '../reading/evm-address.js';
import { canonicalJson } from '../../shared/json.js';
import type { NetworkEntry } from '../../shared/networks.js';
import { canonicalNetworkId } from '../reading/match.js';
import type { Challenge as X402Challenge } from '../challenges/requirements.js';
import type { MppSettings } from './settings.js';

/** The MPP method and intent Tollbooth offers: a one-time EVM charge paid with an EIP-3009 authorization. */
export const MPP_METHOD = 'evm';
export const MPP_INTENT = 'charge';

/** The canonical `evm/charge` request of one offer (amounts in atomic units, EIP-55 addresses). */
export interface ChargeRequest {
  amount: string;
  currency: string;
  recipient: string;
  methodDetails: { chainId: number; credentialTypes: ['authorization']; decimals: number };
}

/**
 * One x402 `exact` EIP-3009 option of a route, seen as an MPP `evm/charge` offer: the same price, pay-to, asset and
 * EIP-712 domain. A credential answering it is turned back into an x402 payment for exactly `entry`.
 */
export interface MppOffer {
  /** The advertised x402 entry, as an x402 client would echo it (v2), or the v1 entry of the transfers route. */
  entry: PaymentRequirements;
  x402Version: 1 | 2;
  request: ChargeRequest;
  /** EIP-712 domain of the asset (`extra.name`, `extra.version` of the entry). */
  domain: { name: string; version: string };
  /** `request` serialised canonically (JCS, base64url): what a credential's echoed request must equal. */
  key: string;
}

/** A challenge as issued: the object (MCP carries it as JSON) and its `WWW-Authenticate` form. */
export interface IssuedChallenge {
  challenge: Challenge.Challenge;
  header: string;
}

const EVM_NETWORK = /^eip155:(\d{1,12})$/;

/** The amount an entry asks for: `amount` (v2) or `maxAmountRequired` (v1). */
function amountOf(entry: PaymentRequirements): string | undefined {
  const value = (entry as { amount?: unknown }).amount ?? (entry as { maxAmountRequired?: unknown }).maxAmountRequired;
  return typeof value === 'string' && /^\d{1,78}$/.test(value) ? value : undefined;
}

/** The MPP offer of one x402 entry, when it is an EVM `exact` option settled with EIP-3009 (not Permit2). */
function offerOf(entry: PaymentRequirements, version: 1 | 2, networks: readonly NetworkEntry[]): MppOffer | undefined {
  if (entry.scheme !== 'exact') return undefined;
  const network = canonicalNetworkId(entry.network);
  const chain = EVM_NETWORK.exec(network);
  const extra = (entry.extra ?? {}) as Record<string, unknown>;
  if (!chain || extra.assetTransferMethod === 'permit2') return undefined;
  if (typeof extra.name !== 'string' || typeof extra.version !== 'string') return undefined;
  const net = networks.find((n) => n.id === network && n.family === 'evm');
  const amount = amountOf(entry);
  if (!net || amount === undefined) return undefined;
  const request: ChargeRequest = {
    amount,
    currency: checksumAddress(entry.asset),
    recipient: checksumAddress(entry.payTo),
    methodDetails: { chainId: Number(chain[1]), credentialTypes: ['authorization'], decimals: net.decimals },
  };
  return {
    entry,
    x402Version: version,
    request,
    domain: { name: extra.name, version: extra.version },
    key: encodeRequest(request),
  };
}

/**
 * A challenge's `request` as MPP encodes it: canonical JSON (RFC 8785; our values are strings, integers and plain
 * keys, for which sorted-key JSON is exactly that), base64url without padding — mppx's `PaymentRequest.serialize`
 * (a test keeps them equal).
 */
export function encodeRequest(request: unknown): string {
  return Buffer.from(canonicalJson(request), 'utf8').toString('base64url');
}

/** The MPP offers of a route: every EVM `exact` EIP-3009 entry of its x402 challenge, in the challenge's order. */
export function offersFor(challenge: X402Challenge, networks: readonly NetworkEntry[]): MppOffer[] {
  const version = challenge.x402Version === 1 ? 1 : 2;
  const offers: MppOffer[] = [];
  for (const entry of challenge.accepts as PaymentRequirements[]) {
    const offer = offerOf(entry, version, networks);
    if (offer) offers.push(offer);
  }
  return offers;
}

/** What a challenge is bound to besides its request: the tool it was issued for, and a salt that makes it unique. */
export interface ChallengeBinding {
  tool: string;
}

/** Bytes of the random salt that makes each challenge unique. */
const SALT_BYTES = 12;

/** HMAC-SHA256 keyed once: the inner hash with the key and a fixed message prefix absorbed, and the outer one keyed. */
interface KeyedPrefix {
  inner: Hash;
  outer: Hash;
}

/** SHA-256's block size in bytes (RFC 2104's B). */
const SHA256_BLOCK = 64;

/** HMAC-SHA256 (RFC 2104) of `key` with `prefix` absorbed: the key's pads are hashed once, not for every challenge. */
function keyedPrefix(key: string, prefix: string): KeyedPrefix {
  let bytes = Buffer.from(key, 'utf8');
  if (bytes.length > SHA256_BLOCK) bytes = createHash('sha256').update(bytes).digest();
  const pad = (byte: number) => {
    const block = Buffer.alloc(SHA256_BLOCK);
    bytes.copy(block);
    for (let i = 0; i < SHA256_BLOCK; i++) block[i]! ^= byte;
    return block;
  };
  return {
    inner: createHash('sha256').update(pad(0x36)).update(prefix, 'utf8'),
    outer: createHash('sha256').update(pad(0x5c)),
  };
}

/** The keyed prefixes of each offer, per settings (one secret key and realm each). */
const prefixes = new WeakMap<MppSettings, WeakMap<MppOffer, KeyedPrefix>>();

function prefixOf(settings: MppSettings, offer: MppOffer): KeyedPrefix {
  let byOffer = prefixes.get(settings);
  if (!byOffer) prefixes.set(settings, (byOffer = new WeakMap()));
  let keyed = byOffer.get(offer);
  if (!keyed) {
    keyed = keyedPrefix(settings.secretKey, `${settings.realm}|${MPP_METHOD}|${MPP_INTENT}|${offer.key}|`);
    byOffer.set(offer, keyed);
  }
  return keyed;
}

/**
 * The id of a challenge as mppx computes it (`Challenge.from` with a secret key): HMAC-SHA256 over
 * `realm|method|intent|request|expires|digest|opaque`, base64url without padding. Computed here with node:crypto,
 * the key and the offer's constant prefix hashed once per offer, because issuing goes with every unpaid 402 (a test
 * keeps it equal to mppx's).
 */
function challengeId(keyed: KeyedPrefix, expires: string, opaque: string): string {
  const inner = keyed.inner.copy().update(`${expires}||${opaque}`, 'utf8').digest();
  return keyed.outer.copy().update(inner).digest('base64url');
}

/** The last expiry written, by the whole second it names: every 402 of that second shares the string. */
let lastExpiry = { second: NaN, text: '' };

/** An expiry in whole seconds, as RFC 3339 writes it without a fraction (`2026-11-25T12:05:00Z`): 4 bytes shorter. */
function expiresAt(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== lastExpiry.second)
    lastExpiry = { second, text: new Date(second * 1000).toISOString().replace('.000Z', 'Z') };
  return lastExpiry.text;
}

/** `count` fresh random bytes (base64url), never handed out twice. */
function randomSalt(count: number): string {
  return randomText(count, 'base64url');
}

/**
 * Issues one challenge per offer, each unique (a random salt in `opaque`, so the EIP-3009 nonce the client derives
 * from it is never reused) and bound by the HMAC id to realm, method, intent, request, expiry and the tool. The
 * objects are the ones mppx's `Challenge.from` produces, and the header values mppx's `Challenge.serialize` without
 * the optional whitespace after each comma (RFC 9110 §5.6.1 lists; tested): every byte of a 402's headers counts
 * behind a proxy. `opaque` is short JSON too: `{"s": salt, "t": tool}`.
 */
export function issueChallenges(
  settings: MppSettings,
  offers: readonly MppOffer[],
  binding: ChallengeBinding,
  ttlSeconds: number,
  now = Date.now(),
): IssuedChallenge[] {
  const expires = expiresAt(now + ttlSeconds * 1000);
  const { realm } = settings;
  const tool = JSON.stringify(binding.tool);
  return offers.map((offer) => {
    const salt = randomSalt(SALT_BYTES);
    // JCS of {s: salt, t: tool}: keys in order, strings as JSON writes them (the salt is base64url, the tool name ours).
    const opaque = Buffer.from(`{"s":"${salt}","t":${tool}}`, 'utf8').toString('base64url');
    const id = challengeId(prefixOf(settings, offer), expires, opaque);
    const challenge = {
      id,
      realm,
      method: MPP_METHOD,
      intent: MPP_INTENT,
      request: offer.request,
      expires,
      opaque,
    } as unknown as Challenge.Challenge;
    const header = `Payment id="${id}",realm="${realm}",method="${MPP_METHOD}",intent="${MPP_INTENT}",request="${offer.key}",expires="${expires}",opaque="${opaque}"`;
    return { challenge, header };
  });
}

/** The tool a challenge was issued for, read from its `opaque` (our own base64url JSON, HMAC-bound), or undefined. */
export function boundTool(challenge: Challenge.Challenge): string | undefined {
  if (typeof challenge.opaque !== 'string' || challenge.opaque.length > 512) return undefined;
  try {
    const meta = JSON.parse(Buffer.from(challenge.opaque, 'base64url').toString('utf8')) as Record<
      string,
      unknown
    > | null;
    // `t` since challenges were made shorter; `tool` in the ones issued before (they expire within minutes).
    const tool = meta?.t ?? meta?.tool;
    return typeof tool === 'string' ? tool : undefined;
  } catch {
    return undefined;
  }
}
