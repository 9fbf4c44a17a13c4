import type { x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { EVM_NETWORK_CHAIN_ID_MAP } from '@x402/evm/v1';

/** A payment matched against an advertised entry, in the form verification and settlement use. */
export interface Matched {
  /** The payload to verify and settle (for a short-named v2 entry, `accepted` is the canonical requirement). */
  payload: PaymentPayload;
  /** The requirement to verify and settle against (never the client's copy). */
  requirements: PaymentRequirements;
  /** CAIP-2 id of the network entry that carries the chain (family, RPC, settlement key). */
  networkId: string;
}

/** The CAIP-2 id of a network named by an x402 version-1 short name (`base` → `eip155:8453`); CAIP-2 ids pass through. */
export function canonicalNetworkId(network: string): string {
  if (network.includes(':')) return network;
  const chainId = (EVM_NETWORK_CHAIN_ID_MAP as Record<string, number | undefined>)[network];
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
 * Version 1 carries no `accepted`: the payment names scheme and network only, and is matched on them (x402 §1.2).
 * The requirement handed on is our advertised entry plus `amount` (= `maxAmountRequired`) for receipts and the store.
 */
function matchV1(accepts: readonly PaymentRequirements[], payload: PaymentPayload): Matched | undefined {
  const { scheme, network } = payload as unknown as { scheme?: unknown; network?: unknown };
  const entry = accepts.find((a) => a.scheme === scheme && a.network === network) as unknown as (PaymentRequirements & V1Entry) | undefined;
  if (!entry || typeof entry.maxAmountRequired !== 'string') return undefined;
  return { payload, requirements: { ...entry, amount: entry.maxAmountRequired }, networkId: canonicalNetworkId(entry.network) };
}

/**
 * A version-2 entry advertised under a short network name (the social order's `base` entry, which also carries the
 * v1 fields) is verified and settled as the canonical CAIP-2 requirement of the same chain, asset, amount and payee.
 * The signature covers none of these envelope fields, only the authorization itself (chain id, token, payee, value),
 * and the client's echo has already been matched field for field against what we advertised.
 */
function canonicalV2(payload: PaymentPayload, advertised: PaymentRequirements): Matched {
  if (!isShortNetworkName(advertised.network)) return { payload, requirements: advertised, networkId: advertised.network };
  const network = canonicalNetworkId(advertised.network) as PaymentRequirements['network'];
  const { scheme, asset, amount, payTo, maxTimeoutSeconds, extra } = advertised;
  const requirements: PaymentRequirements = { scheme, network, asset, amount, payTo, maxTimeoutSeconds, extra };
  return { payload: { ...payload, accepted: requirements }, requirements, networkId: network };
}

/** Matches a decoded payment against a tool's advertised `accepts`, in the payment's protocol version. */
export function matchPayment(server: x402ResourceServer, accepts: readonly PaymentRequirements[], payload: PaymentPayload): Matched | undefined {
  if (payload.x402Version === 1) return matchV1(accepts, payload);
  const advertised = server.findMatchingRequirements([...accepts], payload);
  return advertised ? canonicalV2(payload, advertised) : undefined;
}
