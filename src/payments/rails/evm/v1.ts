/**
 * x402 version 1, `exact` on EVM under a short network name (`base`), on the official v1 facilitator scheme of
 * @x402/evm (`@x402/evm/exact/v1/facilitator`, no shim). It is registered only for the short names our v1
 * challenges advertise, each with the signer of its own chain (never `registerExactEvmScheme`, which would
 * register every v1 network with one signer). The replay key is the same as the v2 `exact` rail's on the
 * canonical CAIP-2 network, so one EIP-3009 authorization cannot buy a call on each version.
 */
import type { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { ExactEvmSchemeV1 as ExactEvmV1FacilitatorScheme } from '@x402/evm/exact/v1/facilitator';
import { canonicalNetworkId } from '../../reading/match.js';
import type { NetworkEntry } from '../../../shared/networks.js';
import { guardedEvmScheme } from './chain.js';
import { eip3009Authorization, evmExactRail, evmExactReplayKey } from './exact.js';
import { EVM_EXACT_V1, V1_NETWORK_NAMES } from '../info.js';
import type { Identified, LoadedRail, InProcessSettings } from '../rail.js';
import { checkExpiry } from '../window.js';

export { V1_NETWORK_NAMES } from '../info.js';

function canonical(requirements: PaymentRequirements): PaymentRequirements {
  return { ...requirements, network: canonicalNetworkId(requirements.network) as PaymentRequirements['network'] };
}

/** Version-1 `exact` on EVM (EIP-3009), matched on scheme + short network name. */
export const evmExactV1Rail: LoadedRail = {
  ...EVM_EXACT_V1,
  // Registered under the short name only so the resource server can resolve the payment flow of a v1 payment.
  serverScheme: () => new ExactEvmServerScheme(),
  identify(payload, requirements): Identified {
    const auth = eip3009Authorization(payload);
    if (!auth)
      return {
        ok: false,
        message:
          'The version-1 exact payment is not a well-formed EIP-3009 authorization: it needs `from` and `to` addresses, decimal `value`, `validAfter` and `validBefore`, a 32-byte `nonce` and a hex `signature`.',
      };
    const tooLong = checkExpiry(auth.validBefore, requirements.maxTimeoutSeconds, '`validBefore`');
    if (tooLong) return tooLong;
    return { ok: true, replayKey: evmExactReplayKey(canonical(requirements), auth), payer: auth.from };
  },
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
    evmExactRail.lookup!({ ...pending, requirements: canonical(pending.requirements) }, net, config),
};
