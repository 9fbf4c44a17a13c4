/**
 * EVM `upto` with a Permit2 witness authorization (docs/payments.md#evm-upto-permit2-on-base), on the official
 * `UptoEvmScheme` server and facilitator of @x402/evm (no shim): the facilitator checks spender = the x402 upto proxy,
 * witness `to` = our pay-to, witness `facilitator` = one of our settling addresses (published as
 * `extra.facilitatorAddress`), deadline, amount, token, the payer's signature, and simulates the proxy's `settle`; a
 * payer who never approved Permit2 is answered `permit2_allowance_required` (HTTP 412). We settle the endpoint's price,
 * which is the advertised `amount` and so never above the signed maximum.
 */
import type { x402Facilitator } from '@x402/core/facilitator';
import { UptoEvmScheme as UptoEvmFacilitatorScheme } from '@x402/evm/upto/facilitator';
import type { NetworkEntry } from '../../../shared/networks.js';
import { guardedEvmScheme } from './chain.js';
import { lookupPermit2 } from './upto-lookup.js';
import { evmUptoServer } from './upto-server.js';
import { EVM_UPTO } from '../info.js';
import type { LoadedRail, InProcessSettings } from '../rail.js';

export { permit2Authorization, permit2ReplayKey } from './upto-server.js';

/** `upto` on EVM with a Permit2 witness transfer through the x402 upto proxy. */
export const evmUptoRail: LoadedRail = {
  ...EVM_UPTO,
  ...evmUptoServer,
  registerInProcess(facilitator: x402Facilitator, nets: readonly NetworkEntry[], config: InProcessSettings): string[] {
    const key = config.facilitator.keys.evm;
    if (!key) return [];
    const done: string[] = [];
    for (const net of nets.filter((n) => n.schemes.includes('upto'))) {
      const scheme = guardedEvmScheme(
        net,
        key,
        config.facilitator.settleTimeoutMs,
        (signer) => new UptoEvmFacilitatorScheme(signer),
      );
      if (!scheme) continue;
      facilitator.register(net.id as `${string}:${string}`, scheme);
      done.push(net.id);
    }
    return done;
  },
  lookup: lookupPermit2,
};
