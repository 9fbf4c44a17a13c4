/**
 * Stellar `exact` rail (x402 v2; SEP-41 `transfer(from, to, amount)` authorized by a signed Soroban entry, fees
 * sponsored by our settlement account).
 *
 * Why not the official `@x402/stellar` 2.9.0 (the only published version) behind a shim: it pins @x402/core 2.9 and
 * @stellar/stellar-sdk 14, and besides the known server gap (no `defaultAssetTransferMethod`/`paymentFlows`, which
 * makes the 2.27 resource server throw) its facilitator
 *  - asks the public Horizon (hard-coded URL, no timeout) for the ledger close time on every verify, so every
 *    Stellar payment would depend on an unconfigurable third-party server that a shim cannot redirect;
 *  - never checks the payer's signature itself (only that it is not void), leaving it to the RPC's simulation;
 *  - builds each settlement from a fresh `getAccount`, so two settlements at once reuse one sequence number
 *    and one of them fails after its handler already ran;
 *  - reaches for `console.error` and only accepts https RPC URLs on pubnet.
 * So the scheme is implemented here on @stellar/stellar-sdk 15.1 behind @x402/core 2.27's `SchemeNetworkServer`
 * (server.ts) and `SchemeNetworkFacilitator` (facilitator.ts), following the x402 Stellar spec
 * (docs/payments.md#stellar-exact) and the official facilitator's checks and reason strings, plus local ed25519
 * verification of the payer's entry, an exact match of the authorized invocation, a minimum remaining
 * validity, one settlement at a time per account with a fresh simulation of the transaction we submit,
 * `settlement_pending` with the hash when the outcome is unknown (settling again waits for that transaction
 * instead of submitting a second one), and a `lookup` for reconciliation. `@x402/stellar`'s client is what the
 * tests pay with (it works with our core once the asset is allowed in its spend controls); nothing of it runs
 * in production.
 *
 * Replay key: the payer's address + the authorization entry's nonce. Executing the authorization writes the
 * nonce entry (address, nonce) to the ledger, so the chain itself accepts it once; any second envelope around the
 * same entry is refused by the chain, and so by our guard first. The signed entry's hash would be a weaker key:
 * re-signing the same nonce with another expiration gives a new hash for what the chain still accepts only once.
 */
import type { x402Facilitator } from '@x402/core/facilitator';
import type { Config } from '../../../config/config.js';
import type { NetworkEntry } from '../../../shared/networks.js';
import { ExactStellarFacilitatorScheme } from './facilitator.js';
import { lookupAuthorization } from './lookup.js';
import { stellarPassphrase, stellarRpc } from './network.js';
import { stellarExactServer, stellarPayerAuthorization } from './rail-server.js';
import { STELLAR_EXACT } from '../info.js';
import type { LookupResult, PendingSettlement, LoadedRail, InProcessSettings } from '../rail.js';

export { stellarExactReplayKey, stellarPayerAuthorization } from './rail-server.js';

async function lookup(pending: PendingSettlement, net: NetworkEntry, config: Config): Promise<LookupResult> {
  if (!net.rpcUrl || !stellarPassphrase(net.id)) return { type: 'pending' };
  const found = stellarPayerAuthorization(pending.payload, net.id);
  if (!found.ok) return { type: 'failed', reason: 'invalid_payment' };
  return lookupAuthorization(
    stellarRpc(net.rpcUrl, config.facilitator.timeoutMs),
    found.auth,
    pending.requirements,
    pending.transaction,
  );
}

/** `exact` on Stellar: a payer-signed Soroban authorization of a SEP-41 transfer, settled and fee-sponsored by us. */
export const stellarExactRail: LoadedRail = {
  ...STELLAR_EXACT,
  ...stellarExactServer,
  registerInProcess(facilitator: x402Facilitator, nets: readonly NetworkEntry[], config: InProcessSettings): string[] {
    const secret = config.facilitator.keys.stellar;
    if (!secret) return [];
    const done: string[] = [];
    for (const net of nets) {
      const passphrase = stellarPassphrase(net.id);
      if (!passphrase || !net.rpcUrl) continue;
      const scheme = new ExactStellarFacilitatorScheme({
        network: net.id,
        passphrase,
        rpcUrl: net.rpcUrl,
        secret,
        rpcTimeoutMs: config.facilitator.timeoutMs,
        // Answer `settlement_pending` with the hash before the broker's own settle timeout cuts us off.
        confirmationTimeoutMs: Math.max(1_000, config.facilitator.settleTimeoutMs - 2_000),
      });
      facilitator.register(net.id as `${string}:${string}`, scheme);
      done.push(net.id);
    }
    return done;
  },
  lookup,
};
