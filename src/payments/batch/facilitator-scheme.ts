/**
 * The in-process facilitator's side of x402 `batch-settlement` (BATCH_SETTLEMENT=on with FACILITATOR_EVM_PRIVATE_KEY):
 * the official facilitator scheme on each EVM network with an RPC URL, relaying deposits, claims, settles and refunds
 * with the settlement key. Loaded by the facilitator thread only when the switch is on (start-up cost off is nil).
 */
import type { x402Facilitator } from '@x402/core/facilitator';
import type { AuthorizerSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/facilitator';
import { privateKeyToAccount } from 'viem/accounts';
import type { NetworkEntry } from '../../shared/networks.js';
import { guardedEvmScheme } from '../rails/evm/chain.js';
import type { InProcessSettings } from '../rails/rail.js';

/**
 * Registers the official batch-settlement facilitator scheme on each of `nets`; returns the networks registered. The
 * settlement key is also the receiver-authorizer it lists at `/supported` (only this server asks it, so it signs for
 * no one else): a seller without BATCH_RECEIVER_AUTHORIZER_KEY delegates its claims and refunds to it.
 */
export function registerBatchInProcess(
  facilitator: x402Facilitator,
  nets: readonly NetworkEntry[],
  config: InProcessSettings,
): string[] {
  const key = config.facilitator.keys.evm;
  if (!key) return [];
  const authorizer = privateKeyToAccount(key) as unknown as AuthorizerSigner;
  const done: string[] = [];
  for (const net of nets) {
    const scheme = guardedEvmScheme(
      net,
      key,
      config.facilitator.settleTimeoutMs,
      (signer) => new BatchSettlementEvmScheme(signer, authorizer),
    );
    if (!scheme) continue;
    facilitator.register(net.id as `${string}:${string}`, scheme);
    done.push(net.id);
  }
  return done;
}
