import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { containsSubset, jsonEqual } from '../../shared/json.js';
import { V1_EVM_CHAIN_IDS } from '../../shared/v1-networks.js';

/** A payment matched against an advertised entry, in the form verification and settlement use. */
export interface Matched {
  /**
   * The payload to verify and settle: the client's signed `payload` under our own advertised entry as `accepted`
   * (canonical form), never the client's copy of the envelope.
   */
  payload: PaymentPayload;
  /** The requirement to verify and settle against (never the client's copy). */
  requirements: PaymentRequirements;
  /** CAIP-2 id of the network entry that carries the chain (family, RPC, settlement key). */
  networkId: string;
}

/** The CAIP-2 id of a network named by an x402 version-1 short name (`base` → `eip155:8453`); CAIP-2 ids pass through. */
export function canonicalNetworkId(network: string): string {
  if (network.includes(':')) return network;
  const chainId = Object.prototype.hasOwnProperty.call(V1_EVM_CHAIN_IDS, network)
    ? V1_EVM_CHAIN_IDS[network]
    : undefined;
  return chainId === undefined ? network : `eip155:${chainId}`;
}

/** True when a network is named the version-1 way (a short name such as `base`, not CAIP-2). */
export function isShortNetworkName(network: string): boolean {
  return !network.includes(':');
}

/** A version-1 entry: the amount is `maxAmountRequired`. */
interface V1Entry {
  scheme: string;
  network: string;
  maxAmountRequired: string;
}

/**
 * Version 1 carries no `accepted`: the payment names scheme and network only, and is matched on them
 * (docs/spec-notes.md#version-1-payments). The requirement handed on is our advertised entry plus `amount` (=
 * `maxAmountRequired`) for receipts and the store.
 */
function matchV1(accepts: readonly PaymentRequirements[], payload: PaymentPayload): Matched | undefined {
  const { scheme, network } = payload as unknown as { scheme?: unknown; network?: unknown };
  const entry = accepts.find((a) => a.scheme === scheme && a.network === network) as unknown as
    (PaymentRequirements & V1Entry) | undefined;
  if (!entry || typeof entry.maxAmountRequired !== 'string') return undefined;
  return {
    payload,
    requirements: { ...entry, amount: entry.maxAmountRequired },
    networkId: canonicalNetworkId(entry.network),
  };
}

/**
 * The requirement a version-2 entry is verified and settled as. An entry advertised under a short network name (the
 * social order's `base` entry, which also carries the v1 fields) becomes the canonical CAIP-2 requirement of the same
 * chain, asset, amount and payee: the signature covers none of the envelope fields, only the authorization itself.
 */
function canonicalRequirement(advertised: PaymentRequirements): {
  requirements: PaymentRequirements;
  networkId: string;
} {
  if (!isShortNetworkName(advertised.network)) return { requirements: advertised, networkId: advertised.network };
  const network = canonicalNetworkId(advertised.network) as PaymentRequirements['network'];
  const { scheme, asset, amount, payTo, maxTimeoutSeconds, extra } = advertised;
  return { requirements: { scheme, network, asset, amount, payTo, maxTimeoutSeconds, extra }, networkId: network };
}

/**
 * The x402 matching rule (as `@x402/core` applies it), done with our own comparisons: every field of the advertised
 * entry except `extra` is echoed equal, and `accepted.extra` contains every advertised `extra` key with its value.
 * Fields the client added to `accepted` are ignored (the core's schema strips them).
 */
function echoes(advertised: PaymentRequirements, accepted: Record<string, unknown>): boolean {
  for (const [key, value] of Object.entries(advertised)) {
    if (key === 'extra' || value === undefined) continue;
    if (!jsonEqual(value, accepted[key])) return false;
  }
  return advertised.extra === undefined || containsSubset(advertised.extra, accepted.extra ?? undefined);
}

/** Matches payments against one tool's advertised `accepts`, indexed once by scheme and network. */
export function createMatcher(
  accepts: readonly PaymentRequirements[],
): (payload: PaymentPayload) => Matched | undefined {
  const byRoute = new Map<string, PaymentRequirements[]>();
  for (const entry of accepts) {
    const route = `${entry.scheme}\n${entry.network}`;
    byRoute.set(route, [...(byRoute.get(route) ?? []), entry]);
  }
  const prepared = new Map(accepts.map((entry) => [entry, canonicalRequirement(entry)]));
  return (payload) => {
    if (payload.x402Version === 1) return matchV1(accepts, payload);
    const accepted = payload.accepted as unknown as Record<string, unknown>;
    const candidates = byRoute.get(`${String(accepted.scheme)}\n${String(accepted.network)}`) ?? [];
    const advertised = candidates.find((entry) => echoes(entry, accepted));
    if (!advertised) return undefined;
    const { requirements, networkId } = prepared.get(advertised)!;
    const { x402Version, payload: signed } = payload;
    return {
      payload: { x402Version, accepted: requirements, payload: signed } as PaymentPayload,
      requirements,
      networkId,
    };
  };
}

/** Matches one payment against advertised entries (building the index each time: for tests and one-off checks). */
export function matchPayment(accepts: readonly PaymentRequirements[], payload: PaymentPayload): Matched | undefined {
  return createMatcher(accepts)(payload);
}
