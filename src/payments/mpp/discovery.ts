import type { AnyPaidToolDefinition } from '../../tool/tool.js';
import { MPP_INTENT, MPP_METHOD, type MppOffer } from './challenge.js';
import type { MppGate } from './gate.js';

/**
 * One MPP offer as the discovery documents state it: the fields of an MPP discovery offer (`method`, `intent`,
 * `amount` in atomic units, `currency` = the token contract) plus the rest of the `evm/charge` request a challenge
 * carries (`recipient`, `methodDetails`), so an agent can budget before its first call.
 */
export interface MppOfferInfo {
  method: typeof MPP_METHOD;
  intent: typeof MPP_INTENT;
  amount: string;
  currency: string;
  recipient: string;
  methodDetails: { chainId: number; decimals: number; credentialTypes: ['authorization'] };
}

/** What the discovery documents say about paying one tool with MPP. */
export interface MppToolInfo {
  /** The realm every challenge of this server names. */
  realm: string;
  /** One entry per challenge a bare probe receives, in the same order. */
  offers: MppOfferInfo[];
}

/** Where MPP clients find challenges, send credentials and read receipts, over HTTP and MCP. */
export const MPP_WHERE = {
  challenge: {
    http: 'WWW-Authenticate: Payment (on the 402)',
    mcp: '_meta["org.paymentauth/payment-required"] (on the unpaid result)',
  },
  credential: { http: 'Authorization: Payment', mcp: '_meta["org.paymentauth/credential"]' },
  receipt: { http: 'Payment-Receipt', mcp: '_meta["org.paymentauth/receipt"]' },
} as const;

/** `_meta` key of tools/list under which each paid tool lists its MPP offers (our convention; mppx defines none). */
export const MPP_OFFERS_META_KEY = 'org.paymentauth/offers';

/** The discovery form of one offer: exactly the request its challenge carries, with method and intent. */
export function mppOfferInfo(offer: MppOffer): MppOfferInfo {
  const { amount, currency, recipient, methodDetails } = offer.request;
  return {
    method: MPP_METHOD,
    intent: MPP_INTENT,
    amount,
    currency,
    recipient,
    methodDetails: {
      chainId: methodDetails.chainId,
      decimals: methodDetails.decimals,
      credentialTypes: methodDetails.credentialTypes,
    },
  };
}

/**
 * The MPP side of a tool for discovery, from the gate's own offers (the ones its challenges are issued from), or
 * undefined when MPP is off or the tool has no EVM EIP-3009 option (then no document mentions MPP for it).
 */
export function mppToolInfo(gate: MppGate | undefined, tool: AnyPaidToolDefinition): MppToolInfo | undefined {
  if (!gate?.enabled) return undefined;
  const offers = gate.offers(tool);
  if (offers.length === 0) return undefined;
  return { realm: gate.settings.realm, offers: offers.map(mppOfferInfo) };
}
