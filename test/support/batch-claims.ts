/**
 * Our claim loop over our store, against the official batch-settlement parties on the local Base chain: the
 * official server scheme keeps its channels in the store (so real official-client vouchers fill `batch_channels`),
 * and a loop claims, settles and refunds through the in-process official facilitator, optionally refusing the next
 * settlements as a facilitator that is down would.
 */
import { type FacilitatorClient, HTTPFacilitatorClient } from '@x402/core/server';
import { privateKeyToAccount } from 'viem/accounts';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { ClaimLoop } from '../../src/payments/batch/claim-loop.js';
import { officialChannelStorage } from '../../src/payments/batch/storage.js';
import { createLogger } from '../../src/shared/log.js';
import type { NetworkEntry } from '../../src/shared/networks.js';
import type { Store } from '../../src/store/store.js';
import type { BatchSettlementEnvironment } from './chain/batch-settlement.js';
import { BASE_NETWORK, type BatchParties, startBatchParties } from './chain/batch-settlement-parties.js';

/** The facilitator as the loop sees it, which can be told to refuse its next `count` settlements. */
export interface FlakyFacilitator extends FacilitatorClient {
  refuseNext(count: number): void;
  /** Holds the answer to the next settlement back until `release` is called; `asked` resolves once it was asked. */
  holdNext(): { asked: Promise<void>; release: () => void };
}

/** Wraps the official in-process facilitator: a refused settlement answers as a failing facilitator does. */
export function flakyFacilitator(inner: FacilitatorClient): FlakyFacilitator {
  let refusals = 0;
  let hold: { asked: () => void; released: Promise<void> } | undefined;
  return {
    verify: (p: PaymentPayload, r: PaymentRequirements) => inner.verify(p, r),
    settle: async (p: PaymentPayload, r: PaymentRequirements) => {
      const held = hold;
      hold = undefined;
      if (held) {
        held.asked();
        await held.released;
      }
      if (refusals > 0) {
        refusals -= 1;
        return {
          success: false,
          errorReason: 'unexpected_settle_error',
          errorMessage: 'SECRET-FACILITATOR-TEXT',
          transaction: '',
          network: r.network,
        };
      }
      return inner.settle(p, r);
    },
    getSupported: () => inner.getSupported(),
    refuseNext: (count: number) => {
      refusals = count;
    },
    holdNext: () => {
      let asked!: () => void;
      let release!: () => void;
      const wasAsked = new Promise<void>((resolve) => (asked = resolve));
      hold = { asked, released: new Promise<void>((resolve) => (release = resolve)) };
      return { asked: wasAsked, release };
    },
  } as FlakyFacilitator;
}

/** The official parties selling at `price` with their channels in `store`. */
export function partiesOnStore(env: BatchSettlementEnvironment, store: Store, price: bigint): Promise<BatchParties> {
  return startBatchParties(env, price, { storage: officialChannelStorage(store.channels!) });
}

/** Our claim loop over `store` for the parties' scheme on the local Base network. */
export function claimLoopOn(
  env: BatchSettlementEnvironment,
  parties: BatchParties,
  store: Store,
  facilitator: FacilitatorClient,
  settings = { claimInterval: 3600, claimThreshold: '1000000000', refundIdle: 7 * 86_400 },
): ClaimLoop {
  const network = { id: BASE_NETWORK, family: 'evm', asset: env.token, decimals: 6 } as NetworkEntry;
  return new ClaimLoop({
    seller: { schemesByNetwork: new Map([[BASE_NETWORK, parties.serverScheme]]) },
    facilitator,
    channels: store.channels!,
    upkeep: store.batchUpkeep!,
    ledger: store.ledger,
    networks: [network],
    settings,
    log: createLogger('error'),
  });
}

/**
 * Our claim loop over a Tollbooth server's `store`, signing with the server's receiver-authorizer key and going
 * through the facilitator at `facilitatorUrl` over HTTP (or through a facilitator client, e.g. the server's
 * in-process one); its threshold is one base unit, so each tick claims what is charged (and settles it).
 */
export async function claimLoopForServer(
  env: BatchSettlementEnvironment,
  authorizerKey: `0x${string}`,
  store: Store,
  facilitatorUrl: string | FacilitatorClient,
): Promise<ClaimLoop> {
  const parties = await partiesOnStore({ ...env, receiverAuthorizer: privateKeyToAccount(authorizerKey) }, store, 1n);
  const settings = { claimThreshold: '1', claimInterval: 3600, refundIdle: 7 * 86_400 };
  const facilitator =
    typeof facilitatorUrl === 'string' ? new HTTPFacilitatorClient({ url: facilitatorUrl }) : facilitatorUrl;
  return claimLoopOn(env, parties, store, facilitator, settings);
}
