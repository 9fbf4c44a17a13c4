import { MPP_INTENT, MPP_METHOD } from '../payments/mpp/challenge.js';
import type { MppToolInfo } from '../payments/mpp/discovery.js';
import type { DiscoveryCatalog } from './catalog.js';

type Json = Record<string, unknown>;

/**
 * The MPP fields added to an operation's `x-payment-info`, so the document is also an MPP discovery document.
 *
 * MPP allows either flat fields (`method`, `intent`, `amount`, `currency`) or an `offers` list, never both, and the
 * x402scan fields already hold a flat `currency: "USD"` (with `price` in dollars). So the MPP side is the flat form:
 * `method` and `intent` at the top (beside x402scan's `currency`, the unit of `price`; no single `amount`, because
 * each offer is priced in its own token), and the exact offers — what the challenges of a bare probe ask for — under
 * `mpp.offers`, each a valid MPP offer (amount in atomic units, currency = token contract, recipient, chain).
 */
export function mppPaymentInfo(info: MppToolInfo): Json {
  return { method: MPP_METHOD, intent: MPP_INTENT, mpp: { realm: info.realm, offers: info.offers } };
}

/** The MPP response headers, for `components.headers`. */
export function mppHeaderComponents(): Json {
  return {
    'WWW-Authenticate': {
      description:
        'MPP: one `Payment` challenge per MPP offer (method evm, intent charge; the request in base64url JSON). Answer one with `Authorization: Payment <credential>` on the same call.',
      schema: { type: 'string' },
    },
    'Payment-Receipt': {
      description:
        'MPP: the receipt of a call paid with `Authorization: Payment` (base64url JSON: method, reference = the transaction, status, timestamp, challengeId).',
      schema: { type: 'string' },
    },
  };
}

/** The MPP header of a paid operation's 402 answer, and of its 200 answer. */
export const MPP_RESPONSE_HEADERS = {
  challenge: { 'WWW-Authenticate': { $ref: '#/components/headers/WWW-Authenticate' } },
  receipt: { 'Payment-Receipt': { $ref: '#/components/headers/Payment-Receipt' } },
} as const;

/** `x-service-info` at the document root: where an MPP client reads more (the llms.txt, the server's index page). */
export function mppServiceInfo(catalog: DiscoveryCatalog): Json {
  return { docs: { homepage: new URL('/', catalog.urls.openapi).href, llms: catalog.urls.llms } };
}

/** The sentence the document's description adds when MPP is offered. */
export const MPP_DESCRIPTION =
  ' MPP clients may pay instead: the same 402 carries `WWW-Authenticate: Payment` challenges (method evm, intent charge, listed per operation in `x-payment-info.mpp.offers`); repeat the call with `Authorization: Payment <credential>`.';
