import type { x402Facilitator } from '@x402/core/facilitator';
import { ExactEvmScheme as ExactEvmFacilitatorScheme } from '@x402/evm/exact/facilitator';
import type { NetworkEntry } from '../../../shared/networks.js';
import { guardedEvmScheme } from './chain.js';
import { lookupEip3009 } from './exact-lookup.js';
import { evmExactServer } from './exact-server.js';
import { EVM_EXACT } from '../info.js';
import type { LoadedRail, InProcessSettings } from '../rail.js';

export { eip3009Authorization, evmExactReplayKey } from './exact-server.js';

/** `exact` on EVM with an EIP-3009 `transferWithAuthorization` (the default EVM rail). */
export const evmExactRail: LoadedRail = {
  ...EVM_EXACT,
  ...evmExactServer,
  registerInProcess(facilitator: x402Facilitator, nets: readonly NetworkEntry[], config: InProcessSettings): string[] {
    const key = config.facilitator.keys.evm;
    if (!key) return [];
    const done: string[] = [];
    for (const net of nets) {
      const scheme = guardedEvmScheme(
        net,
        key,
        config.facilitator.settleTimeoutMs,
        (signer) => new ExactEvmFacilitatorScheme(signer),
      );
      if (!scheme) continue;
      facilitator.register(net.id as `${string}:${string}`, scheme);
      done.push(net.id);
    }
    return done;
  },
  lookup: lookupEip3009,
};
