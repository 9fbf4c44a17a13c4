import { ConfigError, type Config } from '../config/config.js';
import type { ChallengeBook } from '../payments/challenges/requirements.js';
import { createFacilitator, type Facilitator } from '../payments/facilitators/facilitator.js';
import { settleableOnly } from '../payments/facilitators/facilitator-support.js';
import type { Logger } from '../shared/log.js';
import type { Metrics } from '../observe/metrics.js';
import { deferredStore, type DeferredStore } from '../store/deferred.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/store.js';
import type { AnyPaidToolDefinition } from '../tool/tool.js';
import type { WorkerEntry } from '../workers/pool.js';

/**
 * The store, the facilitator and the challenge book, the store opened while the facilitator starts and is asked what
 * it settles (a remote one answers over the network, a local one starts its thread): neither waits for the other.
 * The book withholds what no facilitator can settle (or start is refused) before any challenge is built. A failure
 * closes what was opened; the store's own failure is reported first, as when the store was opened first. With
 * `openStoreLater`, the store is not opened here: `deferred` opens it when asked (once the server answers) or on first use.
 */
export async function openStoreAndBook(
  config: Config,
  log: Logger,
  paid: readonly AnyPaidToolDefinition[],
  options: { store?: Store | undefined; facilitatorEntry?: WorkerEntry | undefined; openStoreLater?: boolean },
): Promise<{ store: Store; facilitator: Facilitator; book: ChallengeBook; deferred?: DeferredStore }> {
  const facilitating = createFacilitator(config, undefined, options.facilitatorEntry).then((facilitator) => ({
    facilitator,
    booking: settleableOnly(config, facilitator, log, paid).then(
      (book) => ({ type: 'book' as const, book }),
      (err: unknown) => ({ type: 'refused' as const, err }),
    ),
  }));
  const deferred = options.openStoreLater && !options.store ? deferredStore(() => openStore(config, log)) : undefined;
  const given = options.store ?? deferred?.store;
  const [opened, started] = await Promise.allSettled([given ?? openStore(config, log), facilitating]);
  const booked = started.status === 'fulfilled' ? await started.value.booking : undefined;
  if (opened.status === 'fulfilled' && started.status === 'fulfilled' && booked?.type === 'book')
    return { store: opened.value, facilitator: started.value.facilitator, book: booked.book, deferred };
  if (started.status === 'fulfilled') await started.value.facilitator.close();
  if (opened.status === 'fulfilled' && !given) await opened.value.close();
  if (opened.status === 'rejected') throw opened.reason;
  if (started.status === 'rejected') throw started.reason;
  throw new ConfigError(((booked as { err: unknown }).err as Error).message);
}

/** How long after a server starts answering its store left for later opens, unless a call needs the store sooner. */
const FIRST_ANSWERS_MS = 100;

/**
 * Runs `work` (opening a store left for later, reading the process figures) once the requests sent the moment the
 * server listens were answered (`waitMs` later): an MCP host's first messages, a crawler's or a load balancer's first
 * probe. Opening the store (loading the driver, opening and migrating the file) is synchronous work that would hold
 * them back. `work` may decide then that there is nothing left to do (the runtime closed meanwhile).
 */
export async function afterFirstAnswers(
  work: () => Promise<void> | undefined,
  waitMs = FIRST_ANSWERS_MS,
): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, waitMs));
  await work();
}

/** What waits for the first answers: the process figures read, and the store left for later opened. */
export async function openedLater(metrics: Metrics, deferred: DeferredStore | undefined): Promise<void> {
  metrics.collectProcess();
  await deferred?.open();
}
