/**
 * The HTTP wire of the two payment protocols: the header names of the x402 HTTP transport and of MPP's `Payment`
 * authentication scheme, and how a request is told to carry an MPP credential. Both the HTTP transport (reading,
 * CORS) and the payment answers (writing) use these.
 */

/** Headers of the x402 HTTP transport, by protocol version. */
export const X402_HEADERS = {
  required: 'PAYMENT-REQUIRED',
  response: { 1: 'X-PAYMENT-RESPONSE', 2: 'PAYMENT-RESPONSE' },
} as const;

/** Headers of the MPP HTTP binding (the `Payment` authentication scheme). */
export const MPP_HEADERS = {
  challenge: 'WWW-Authenticate',
  credential: 'Authorization',
  receipt: 'Payment-Receipt',
} as const;

/** The authentication scheme name, compared without case (RFC 9110 §11.1). */
const SCHEME = 'payment';

/** True when an `Authorization` value uses the Payment scheme (checked on the first characters only). */
export function isPaymentAuthorization(value: string | undefined): value is string {
  if (value === undefined) return false;
  const head = value.trimStart().slice(0, SCHEME.length + 1);
  return (
    head.slice(0, SCHEME.length).toLowerCase() === SCHEME &&
    (head.length === SCHEME.length || /\s/.test(head[SCHEME.length]!))
  );
}
