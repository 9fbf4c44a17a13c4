/**
 * x402 version 1, `exact` on EVM under a short network name (`base`), on the official v1 facilitator scheme of
 * @x402/evm (`@x402/evm/exact/v1/facilitator`, no shim). It is registered only for the short names our v1
 * challenges advertise, each with the signer of its own chain (never `registerExactEvmScheme`, which would
 * register every v1 network with one signer). The replay key is the same as the v2 `exact` rail's on the
 * canonical CAIP-2 network, so one EIP-3009 authorization cannot buy a call on each version.
 */
import type { x402Facilitator } from '@x402/core/facilitator';
import { ExactEvmSchemeV1 as ExactEvmV1FacilitatorScheme } from '@x402/evm/exact/v1/facilitator';
import type { NetworkEntry } from '../../../shared/networks.js';
import { guardedEvmScheme } from './chain.js';
import { evmExactRail } from './exact.js';
import { canonicalV1, evmExactV1Server } from './v1-server.js';
import { EVM_EXACT_V1, V1_NETWORK_NAMES } from '../info.js';
import type { LoadedRail, InProcessSettings } from '../rail.js';

export { V1_NETWORK_NAMES } from '../info.js';

/** Version-1 `exact` on EVM (EIP-3009), matched on scheme + short network name. */
export const evmExactV1Rail: LoadedRail = {
  ...EVM_EXACT_V1,
  ...evmExactV1Server,
  registerInProcess(facilitator: x402Facilitator, nets: readonly NetworkEntry[], config: InProcessSettings): string[] {
    const key = config.facilitator.keys.evm;
    if (!key) return [];
    const done: string[] = [];
    for (const net of nets) {
      const names = V1_NETWORK_NAMES[net.id];
      const scheme = names?.length
        ? guardedEvmScheme(
            net,
            key,
            config.facilitator.settleTimeoutMs,
            (signer) => new ExactEvmV1FacilitatorScheme(signer) as never,
          )
        : undefined;
      if (!names || !scheme) continue;
      facilitator.registerV1([...names] as never, scheme as never);
      done.push(...names);
    }
    return done;
  },
  // The chain sees the same EIP-3009 authorization whatever the protocol version was.
  lookup: (pending, net, config) =>
    evmExactRail.lookup!({ ...pending, requirements: canonicalV1(pending.requirements) }, net, config),
};
