import type { PaymentPayload } from '@x402/core/types';
import type { Credential, evm } from 'mppx';
import { checksumAddress } from '../reading/evm-address.js';
import { boundTool, encodeRequest, MPP_INTENT, MPP_METHOD, type MppOffer } from './challenge.js';
import { mppx } from './lib.js';
import { MPP_REASONS, type MppReason } from './problem.js';
import type { MppSettings } from './settings.js';

/** A credential that answers one of the route's challenges: the x402 payment it stands for, and the challenge id. */
export interface MatchedCredential {
  ok: true;
  offer: MppOffer;
  /** The x402 `exact` payment carrying the credential's EIP-3009 authorization, for the route's own entry. */
  payment: PaymentPayload;
  challengeId: string;
  payer: string;
}

/** Why a credential does not answer this route's challenge: reason, HTTP status and a sentence for the caller. */
export interface CredentialMismatch {
  ok: false;
  status: 400 | 402;
  reason: MppReason;
  message: string;
}

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const same = (a: string, b: string) =>
  HEX_ADDRESS.test(a) && HEX_ADDRESS.test(b) && a.toLowerCase() === b.toLowerCase();
const mismatch = (status: 400 | 402, reason: MppReason, message: string): CredentialMismatch => ({
  ok: false,
  status,
  reason,
  message,
});

type Challenge = Credential.Credential['challenge'];
type Authorization = evm.Types.AuthorizationPayload;

/** Checks that the challenge is ours (method, HMAC, realm), issued for this tool and not expired. */
function checkChallenge(
  challenge: Challenge,
  tool: string,
  settings: MppSettings,
  nowMs: number,
): CredentialMismatch | undefined {
  if (challenge.method !== MPP_METHOD || challenge.intent !== MPP_INTENT) {
    return mismatch(
      400,
      MPP_REASONS.methodUnsupported,
      `This server takes MPP payments with method "${MPP_METHOD}" and intent "${MPP_INTENT}" only; the credential is for "${challenge.method}/${challenge.intent}".`,
    );
  }
  if (!mppx().Challenge.verify(challenge, { secretKey: settings.secretKey })) {
    return mismatch(
      402,
      MPP_REASONS.invalidChallenge,
      'The credential echoes a challenge this server did not issue, or one whose fields were changed (amount, recipient, chain, expiry, realm and id are bound together). Ask again without payment for a fresh challenge.',
    );
  }
  if (challenge.realm !== settings.realm) {
    return mismatch(
      402,
      MPP_REASONS.invalidChallenge,
      `The credential answers a challenge of realm "${challenge.realm}"; this server's realm is "${settings.realm}".`,
    );
  }
  if (boundTool(challenge) !== tool) {
    return mismatch(
      402,
      MPP_REASONS.invalidChallenge,
      `The credential answers a challenge issued for another tool; pay the challenge this tool (${tool}) answers with.`,
    );
  }
  return checkChallengeExpiry(challenge, nowMs);
}

/** Checks that the challenge carries a valid expiry that has not passed. */
function checkChallengeExpiry(challenge: Challenge, nowMs: number): CredentialMismatch | undefined {
  if (!challenge.expires || Number.isNaN(Date.parse(challenge.expires))) {
    return mismatch(402, MPP_REASONS.invalidChallenge, 'The challenge carries no valid expiry.');
  }
  if (Date.parse(challenge.expires) <= nowMs) {
    return mismatch(
      402,
      MPP_REASONS.expired,
      `The challenge expired at ${challenge.expires}; ask again without payment for a fresh one.`,
    );
  }
  return undefined;
}

/** Reads the credential payload as an EIP-3009 authorization. */
function readAuthorization(payload: unknown): { ok: true; auth: Authorization } | CredentialMismatch {
  const parsed = mppx().evm.Types.AuthorizationPayloadSchema.safeParse(payload);
  if (!parsed.success) {
    return mismatch(
      400,
      MPP_REASONS.invalidPayload,
      'The credential payload is not an EIP-3009 authorization (type "authorization" with from, to, value, validAfter, validBefore, a 32-byte nonce and a hex signature).',
    );
  }
  return { ok: true, auth: parsed.data };
}

/** Checks that the authorization pays exactly the offer, answers this challenge (nonce) and has not expired. */
function checkAuthorizationTerms(
  auth: Authorization,
  offer: MppOffer,
  challenge: Challenge,
  nowMs: number,
): CredentialMismatch | undefined {
  const { request } = offer;
  if (!same(auth.to, request.recipient))
    return mismatch(
      402,
      MPP_REASONS.recipientMismatch,
      `The authorization pays ${auth.to}, not the challenge's recipient ${request.recipient}.`,
    );
  if (auth.value !== request.amount)
    return mismatch(
      402,
      MPP_REASONS.amountMismatch,
      `The authorization is for ${auth.value} atomic units; the challenge asks for exactly ${request.amount}.`,
    );
  if (auth.nonce.toLowerCase() !== mppx().evm.Types.challengeHash(challenge).toLowerCase()) {
    return mismatch(
      402,
      MPP_REASONS.challengeHashMismatch,
      'The authorization nonce is not the hash of the challenge it answers (keccak256 of id and realm): it was signed for another challenge.',
    );
  }
  if (BigInt(auth.validBefore) * 1000n <= BigInt(nowMs))
    return mismatch(402, MPP_REASONS.expired, 'The authorization has expired (validBefore is past); sign a new one.');
  return undefined;
}

/** Checks that a source the credential names is the authorization's signer on the offer's chain. */
function checkSource(
  credential: Credential.Credential,
  auth: Authorization,
  offer: MppOffer,
): CredentialMismatch | undefined {
  const source = mppx().evm.Types.toSource({
    address: checksumAddress(auth.from) as `0x${string}`,
    chainId: offer.request.methodDetails.chainId,
  });
  if (credential.source !== undefined && credential.source !== source) {
    return mismatch(
      402,
      MPP_REASONS.sourceMismatch,
      `The credential's source ${credential.source} is not the authorization's signer (${source}).`,
    );
  }
  return undefined;
}

/** The x402 `exact` payment, for the offer's own entry and version, that carries the authorization. */
function paymentForOffer(offer: MppOffer, auth: Authorization): PaymentPayload {
  const authorization = {
    from: auth.from,
    to: auth.to,
    value: auth.value,
    validAfter: auth.validAfter,
    validBefore: auth.validBefore,
    nonce: auth.nonce,
  };
  const inner = { signature: auth.signature, authorization };
  return (offer.x402Version === 1
    ? { x402Version: 1, scheme: offer.entry.scheme, network: offer.entry.network, payload: inner }
    : { x402Version: 2, accepted: offer.entry, payload: inner }) as unknown as PaymentPayload;
}

/**
 * Matches a decoded credential to the route it was sent to, statelessly: the challenge id is our HMAC over its fields
 * (so it was issued by a server holding the key), for this realm, this tool, one of this route's offers, not expired;
 * the EIP-3009 authorization pays exactly that offer and carries the challenge's hash as its nonce. The signature is
 * left to the facilitator, which checks it with the offer's EIP-712 domain when the x402 payment is verified.
 */
export function matchCredential(
  credential: Credential.Credential,
  tool: string,
  offers: readonly MppOffer[],
  settings: MppSettings,
  nowMs = Date.now(),
): MatchedCredential | CredentialMismatch {
  const { challenge } = credential;
  const refused = checkChallenge(challenge, tool, settings, nowMs);
  if (refused) return refused;
  const key = encodeRequest(challenge.request);
  const offer = offers.find((o) => o.key === key);
  if (!offer) {
    return mismatch(
      402,
      MPP_REASONS.invalidChallenge,
      'The credential answers a challenge whose price, asset, recipient or chain this route no longer offers; ask again without payment for a fresh challenge.',
    );
  }
  const read = readAuthorization(credential.payload);
  if (!read.ok) return read;
  const { auth } = read;
  const wrong = checkAuthorizationTerms(auth, offer, challenge, nowMs) ?? checkSource(credential, auth, offer);
  if (wrong) return wrong;
  return { ok: true, offer, payment: paymentForOffer(offer, auth), challengeId: challenge.id, payer: auth.from };
}
