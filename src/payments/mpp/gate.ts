import type { PaymentPayload } from '@x402/core/types';
import type { Logger } from '../../shared/log.js';
import type { AnyPaidToolDefinition } from '../../tool/tool.js';
import type { NetworkEntry } from '../../shared/networks.js';
import type { Challenge as X402Challenge } from '../challenges/requirements.js';
import { issueChallenges, offersFor, type IssuedChallenge, type MppOffer } from './challenge.js';
import type { DecodedCredential } from './credential.js';
import { MPP_REASONS, type MppReason } from './problem.js';
import type { MppSettings } from './settings.js';
import { matchCredential } from './verify.js';

/** An MPP credential read for the broker: the x402 payment it stands for, or why it is refused. */
export type MppRead =
  | {
      type: 'payment';
      /** The x402 payment (v2, or v1 on the transfers route) for the route's own entry. */
      payment: PaymentPayload;
      x402Version: 1 | 2;
      /** The challenge id: a retry of the same credential for the same request gets the stored result. */
      idempotencyId: string;
    }
  | { type: 'rejected'; status: 400 | 402; reason: MppReason | string; message: string };

/** The idempotency id of a credential: its challenge id, which is unique per issued challenge and HMAC-bound. */
export const mppIdempotencyId = (challengeId: string) => `mpp_${challengeId}`;

/**
 * The Machine Payments Protocol beside x402 for one process: the offers of each route (derived from its x402
 * challenge), fresh challenges, and the reading of credentials into x402 payments for the broker — so both protocols
 * go through the same matcher, replay guard, facilitators and receipts.
 */
export class MppGate {
  private readonly offersByChallenge = new WeakMap<X402Challenge, MppOffer[]>();

  constructor(
    readonly settings: MppSettings,
    private readonly networks: readonly NetworkEntry[],
    private readonly challengeOf: (tool: AnyPaidToolDefinition) => X402Challenge,
    log?: Logger,
  ) {
    if (settings.enabled && settings.ephemeralKey) {
      log?.warn(
        'MPP_SECRET_KEY is not set: MPP challenges are signed with a random key of this process, so they stop verifying after a restart and on other instances. Set MPP_SECRET_KEY (or MPP_SECRET_KEY_FILE) to a shared secret of at least 32 bytes.',
      );
    }
  }

  /** True when this server offers MPP (MPP=on). */
  get enabled(): boolean {
    return this.settings.enabled;
  }

  /** The route's MPP offers (its EVM `exact` EIP-3009 options), derived once per x402 challenge. */
  offers(tool: AnyPaidToolDefinition): MppOffer[] {
    const challenge = this.challengeOf(tool);
    let offers = this.offersByChallenge.get(challenge);
    if (!offers) {
      offers = offersFor(challenge, this.networks);
      this.offersByChallenge.set(challenge, offers);
    }
    return offers;
  }

  /** Fresh challenges for the route (none when MPP is off or the route has no EVM EIP-3009 option). */
  challenges(tool: AnyPaidToolDefinition): IssuedChallenge[] {
    if (!this.enabled) return [];
    const offers = this.offers(tool);
    if (offers.length === 0) return [];
    const ttl = Math.min(...offers.map((o) => o.entry.maxTimeoutSeconds));
    return issueChallenges(this.settings, offers, { tool: tool.name }, ttl);
  }

  /** Reads a decoded credential for a route: the x402 payment it carries, or the refusal. */
  read(tool: AnyPaidToolDefinition, decoded: DecodedCredential): MppRead {
    if (!this.enabled) {
      return {
        type: 'rejected',
        status: 400,
        reason: MPP_REASONS.disabled,
        message:
          'This server does not accept MPP payments (Authorization: Payment): the operator turned MPP off. Pay with x402 instead (the PAYMENT-REQUIRED challenge of a call without payment).',
      };
    }
    if (!decoded.ok)
      return {
        type: 'rejected',
        status: 400,
        reason: 'invalid_payment',
        message: decoded.message,
      };
    const matched = matchCredential(decoded.credential, tool.name, this.offers(tool), this.settings);
    if (!matched.ok)
      return { type: 'rejected', status: matched.status, reason: matched.reason, message: matched.message };
    return {
      type: 'payment',
      payment: matched.payment,
      x402Version: matched.offer.x402Version,
      idempotencyId: mppIdempotencyId(matched.challengeId),
    };
  }
}
