/**
 * Bounded authorization windows (docs/payments.md#the-paid-path): a payment whose signed expiry lies further ahead
 * than the requirement's `maxTimeoutSeconds` plus {@link AUTHORIZATION_SKEW_SECONDS} is refused when it is read,
 * before it is claimed or verified, so no claim can stay in flight for longer than a challenge's lifetime.
 */

/**
 * Seconds of clock difference allowed between a payer and this server: a client whose clock runs up to a minute
 * ahead still signs an expiry we accept. Stellar's ledger tolerance and Algorand's round bound use the same slack.
 */
export const AUTHORIZATION_SKEW_SECONDS = 60;

/** The refusal of an authorization valid for too long, as a rail's `identify` reports it. */
export interface WindowRefusal {
  ok: false;
  reason: 'authorization_window_too_long';
  message: string;
}

/** The longest validity, in seconds from now, accepted for a requirement's `maxTimeoutSeconds`. */
export function longestWindowSeconds(maxTimeoutSeconds: number): number {
  return Math.ceil(maxTimeoutSeconds) + AUTHORIZATION_SKEW_SECONDS;
}

/** The refusal, telling the caller what to sign instead. */
export function windowRefusal(what: string, maxTimeoutSeconds: number): WindowRefusal {
  return {
    ok: false,
    reason: 'authorization_window_too_long',
    message: `The payment's ${what} lets it be used more than ${longestWindowSeconds(maxTimeoutSeconds)} seconds from now; this server accepts at most maxTimeoutSeconds (${maxTimeoutSeconds}) plus ${AUTHORIZATION_SKEW_SECONDS} seconds of clock skew: sign an authorization that expires within ${maxTimeoutSeconds} seconds.`,
  };
}

/**
 * Checks a signed expiry in Unix seconds (a uint256 as a decimal string or bigint, so 2^256−1 is compared exactly):
 * undefined when it lies within the requirement's window from now, else the refusal naming the field.
 */
export function checkExpiry(
  expiresAt: string | bigint | number,
  maxTimeoutSeconds: number,
  what: string,
  nowMs: number = Date.now(),
): WindowRefusal | undefined {
  const latest = BigInt(Math.floor(nowMs / 1000) + longestWindowSeconds(maxTimeoutSeconds));
  return BigInt(expiresAt) > latest ? windowRefusal(what, maxTimeoutSeconds) : undefined;
}

/**
 * Seconds per Algorand round used to turn the window into rounds: rounds take about 2.8 s, so a payment whose
 * `lastValid` − `firstValid` fits the bound in rounds lives about as long as the window in seconds.
 */
export const ALGORAND_ROUND_SECONDS = 2.8;

/** The most rounds an Algorand payment's `lastValid` − `firstValid` may span for a requirement's `maxTimeoutSeconds`. */
export function longestWindowRounds(maxTimeoutSeconds: number): bigint {
  return BigInt(Math.ceil(longestWindowSeconds(maxTimeoutSeconds) / ALGORAND_ROUND_SECONDS));
}
