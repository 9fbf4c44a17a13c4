/**
 * The seller's claim loop (docs/batch-settlement.md §5): one {@link ClaimRound} per offered (network, token), run by
 * our own timer, not the manager's. A check runs every minute (or every BATCH_CLAIM_INTERVAL if shorter); the
 * instance that takes the store's `batch-claims` lease runs it, the others skip it. A network's claim is due when
 * its `batch-claim-due:<network>` lease can be taken (it is held for BATCH_CLAIM_INTERVAL after each claim, and given
 * back when the claim failed, so the next check retries); the threshold, a pending withdrawal and idle refunds are
 * looked at on every check. The leases save gas, not money: the contract ignores a claim not above the claimed total.
 */
import type { FacilitatorClient } from '@x402/core/server';
import type { Registry } from 'prom-client';
import { watchBatchChannels, type BatchChannelsSource, type BatchMetrics } from '../../observe/metrics-batch.js';
import type { BatchSettings } from '../../config/batch.js';
import type { Logger } from '../../shared/log.js';
import type { NetworkEntry } from '../../shared/networks.js';
import type { BatchUpkeep } from '../../store/batch-upkeep.js';
import type { BatchChannels } from '../../store/channels.js';
import type { PaymentLedger } from '../../store/ledger.js';
import { type OperationLedger, pendingOperations } from './op-ledger.js';
import { ROUND_LEASE_MS, RoundLease } from './round-lease.js';
import type { BatchSeller } from './seller.js';
import { ClaimRound, type RoundOutcome } from './claims.js';
import { landedClaimsOn } from './landed-claims.js';
import { unclaimedByNetwork } from './channel-report.js';

/** The longest wait between two checks (the threshold and idle refunds are looked at this often). */
const MAX_CHECK_SECONDS = 60;

/** What the loop needs. */
export interface ClaimLoopDeps {
  seller: Pick<BatchSeller, 'schemesByNetwork'>;
  facilitator: FacilitatorClient;
  channels: BatchChannels;
  upkeep: BatchUpkeep;
  ledger: OperationLedger;
  networks: readonly NetworkEntry[];
  settings: Pick<BatchSettings, 'claimInterval' | 'claimThreshold' | 'refundIdle'>;
  log: Logger;
  metrics?: BatchMetrics;
}

/** The claim rounds of every offered network, their timer and their leases. */
export class ClaimLoop implements BatchChannelsSource {
  private readonly rounds: { network: string; round: ClaimRound }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: ClaimLoopDeps) {
    for (const [network, scheme] of deps.seller.schemesByNetwork) {
      const net = deps.networks.find((n) => n.id === network);
      const token = net?.asset;
      if (!net || !token) continue;
      const receiver = scheme.getReceiverAddress().toLowerCase();
      const landed = landedClaimsOn(net, receiver);
      const round = new ClaimRound({
        manager: scheme.createChannelManager(
          deps.facilitator,
          network as `${string}:${string}`,
          token as `0x${string}`,
        ),
        facilitator: deps.facilitator,
        network,
        token: token.toLowerCase(),
        receiver,
        ledger: deps.ledger,
        ...(landed ? { landed } : {}),
        log: deps.log,
        ...(deps.metrics ? { metrics: deps.metrics } : {}),
      });
      this.rounds.push({ network, round });
    }
  }

  /** Sets the sink the rounds report their operations to (the metrics read the loop, and the loop reports to them). */
  set metrics(metrics: BatchMetrics) {
    this.deps.metrics = metrics;
    for (const { round } of this.rounds) round.metrics = metrics;
  }

  /**
   * One check of every network, if this instance takes the round lease (else undefined: another one runs it).
   * Never rejects: each failure is logged and recorded by its round.
   */
  async tick(now = Date.now()): Promise<RoundOutcome[] | undefined> {
    const { upkeep, settings, log } = this.deps;
    const lease = new RoundLease(upkeep, 'batch-claims', log);
    if (!(await lease.take(now))) return undefined;
    const outcomes: RoundOutcome[] = [];
    try {
      for (const { network, round } of this.rounds) {
        if (lease.lost) break;
        const dueUntil = now + settings.claimInterval * 1000;
        const due = await upkeep.takeLease(`batch-claim-due:${network}`, dueUntil, now);
        const outcome = await round.run(() => this.deps.channels.list(), {
          due,
          threshold: BigInt(settings.claimThreshold),
          refundIdleSecs: settings.refundIdle,
          now,
          // Only the round lease's holder gets here: a row older than the lease is no other live round's.
          abandonedBefore: now - ROUND_LEASE_MS,
        });
        if (due && outcome.failures.includes('claim'))
          await upkeep.releaseLease(`batch-claim-due:${network}`, dueUntil);
        outcomes.push(outcome);
      }
    } catch (err) {
      log.error('batch-settlement claim round failed', { error: String((err as Error)?.message ?? err) });
    } finally {
      await lease.release().catch(() => undefined);
    }
    return outcomes;
  }

  /** Starts the timer: a first check at once, then every minute (or every claim interval if shorter). */
  start(): void {
    const every = Math.min(MAX_CHECK_SECONDS, this.deps.settings.claimInterval) * 1000;
    const check = () => {
      this.running = this.running
        .then(() => this.tick())
        .catch((err: unknown) =>
          this.deps.log.warn('batch-settlement claim check failed (store unreachable?); retried at the next check', {
            error: String((err as Error)?.message ?? err),
          }),
        );
    };
    check();
    this.timer = setInterval(check, every);
    this.timer.unref();
  }

  /** Stops the timer and waits for a check under way to end. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Open channels and unclaimed value per offered network, from the channels' columns (the metrics' gauges). */
  async snapshot(): Promise<{ network: string; open: number; unclaimed: bigint }[]> {
    const offered = this.deps.networks.filter((n) => this.deps.seller.schemesByNetwork.has(n.id));
    return unclaimedByNetwork(await this.deps.upkeep.summaries(), offered);
  }

  /** Claims, settles and refunds whose row is pending (under way, or left by a stopped process), by network. */
  async inDoubt(): Promise<{ network: string; count: number }[]> {
    const counts = new Map<string, number>();
    for (const p of pendingOperations(await this.deps.ledger.listPending()))
      counts.set(p.network, (counts.get(p.network) ?? 0) + 1);
    return [...counts].map(([network, count]) => ({ network, count }));
  }
}

/** What {@link startClaimLoop} reads from the runtime. */
export interface ClaimLoopParts {
  seller: BatchSeller | undefined;
  facilitator: FacilitatorClient | undefined;
  store: { channels?: BatchChannels; batchUpkeep?: BatchUpkeep; ledger: PaymentLedger };
  networks: readonly NetworkEntry[];
  settings: BatchSettings;
  log: Logger;
  registry: Registry;
}

/** Starts the claim loop when the seller offers batch settlement (and registers its metrics); else undefined. */
export function startClaimLoop(parts: ClaimLoopParts): ClaimLoop | undefined {
  const { seller, facilitator, store } = parts;
  if (!seller || !facilitator || !store.channels || !store.batchUpkeep) return undefined;
  const { channels, batchUpkeep: upkeep, ledger } = store;
  const loop = new ClaimLoop({ ...parts, seller, facilitator, channels, upkeep, ledger });
  loop.metrics = watchBatchChannels(parts.registry, loop);
  loop.start();
  return loop;
}
