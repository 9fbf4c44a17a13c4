import type { Config } from '../config/config.js';
import { createMetrics } from '../observe/metrics.js';
import { watchSettlements } from '../observe/metrics-settlements.js';
import type { BatchSeller } from '../payments/batch/seller.js';
import type { Facilitator } from '../payments/facilitators/facilitator.js';
import type { SettledOutbox } from '../payments/ledger/settled-outbox.js';
import type { Logger } from '../shared/log.js';
import type { Store } from '../store/store.js';

/** What {@link observedUpkeep} reads from the composition root. */
export interface ObservedParts {
  batch?: BatchSeller | undefined;
  facilitator: Facilitator;
  store: Store;
  outbox: SettledOutbox;
  log: Logger;
}

/** The metrics (with the outbox's gauges), and the batch-settlement claim loop when the seller offers the scheme. */
export async function observedUpkeep(config: Config, parts: ObservedParts) {
  const metrics = createMetrics();
  watchSettlements(metrics.registry, parts.outbox);
  // Loaded only when the seller offers batch settlement (off: nothing of the scheme is loaded).
  const start = parts.batch && (await import('../payments/batch/claim-loop.js')).startClaimLoop;
  const claims = start?.({
    ...{ seller: parts.batch, facilitator: parts.facilitator.clients.evm, store: parts.store },
    ...{ networks: config.networks, settings: config.batch, log: parts.log, registry: metrics.registry },
  });
  return { metrics, claims };
}
