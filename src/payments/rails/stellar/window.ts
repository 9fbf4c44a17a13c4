/**
 * The bounded window of a Stellar payment, checked before the claim (docs/payments.md#the-paid-path): the payer's
 * authorization must expire by the ledger `maxTimeoutSeconds` (plus the shared skew) from the network's current one.
 * The current ledger is asked of the network's RPC and kept for one ledger's time, so a burst of payments costs one
 * request; when the RPC cannot say, the facilitator's own check of the same bound runs at verification.
 */
import type { PaymentRequirements } from '@x402/core/types';
import type { Config } from '../../../config/config.js';
import type { NetworkEntry } from '../../../shared/networks.js';
import { windowRefusal, type WindowRefusal } from '../window.js';
import type { PayerAuthorization } from './checks.js';
import { LEDGER_SECONDS, maxExpirationLedger, stellarRpc } from './network.js';

/** The latest ledger per RPC URL, as last asked, with when it was asked. */
const latest = new Map<string, { askedAt: number; ledger: Promise<number> }>();

/** The network's latest ledger, asked at most once per ledger time per RPC URL. */
function latestLedger(url: string, timeoutMs: number): Promise<number> {
  const now = Date.now();
  const known = latest.get(url);
  if (known && now - known.askedAt < LEDGER_SECONDS * 1000) return known.ledger;
  const ledger = stellarRpc(url, timeoutMs)
    .getLatestLedger()
    .then((answer) => answer.sequence);
  ledger.catch(() => latest.delete(url));
  latest.set(url, { askedAt: now, ledger });
  return ledger;
}

/** The refusal of an authorization expiring beyond the window, or undefined (within it, or the RPC could not say). */
export async function checkStellarWindow(
  auth: Pick<PayerAuthorization, 'expirationLedger'>,
  requirements: PaymentRequirements,
  net: NetworkEntry,
  config: Config,
): Promise<WindowRefusal | undefined> {
  if (!net.rpcUrl) return undefined;
  let current: number;
  try {
    current = await latestLedger(net.rpcUrl, config.facilitator.timeoutMs);
  } catch {
    return undefined;
  }
  if (auth.expirationLedger <= maxExpirationLedger(current, requirements.maxTimeoutSeconds)) return undefined;
  return windowRefusal(
    `expiration ledger ${auth.expirationLedger} (the network is at ledger ${current}, ~${LEDGER_SECONDS} s each)`,
    requirements.maxTimeoutSeconds,
  );
}
