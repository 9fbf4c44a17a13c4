import type { Registry } from 'prom-client';
import { promClient } from './metrics-process.js';

/** The batch-settlement operations the claim loop runs. */
export type BatchOperation = 'claim' | 'settle' | 'refund';

/** What the channel gauges read at each scrape (the claim loop's view of the store). */
export interface BatchChannelsSource {
  /** Channels with a balance left, and the unclaimed value (charged − claimed, token base units) by network. */
  snapshot(): Promise<{ network: string; open: number; unclaimed: bigint }[]>;
  /** Claims, settles and refunds whose outcome is not recorded yet (pending rows), by network. */
  inDoubt(): Promise<{ network: string; count: number }[]>;
}

/** The sink the claim loop reports each operation to. */
export interface BatchMetrics {
  /** An operation ended after `seconds`, with a transaction (ok) or failed. */
  operation(op: BatchOperation, network: string, seconds: number, ok: boolean): void;
}

/**
 * Registers the batch-settlement metrics: open channels and unclaimed value per network (read from `source` at each
 * scrape), and the latency and failures of claims, settles and refunds.
 */
export function watchBatchChannels(registry: Registry, source: BatchChannelsSource): BatchMetrics {
  const registers = [registry];
  let last: Promise<{ network: string; open: number; unclaimed: bigint }[]> | undefined;
  // One store read per scrape for both gauges (the first gauge's collect starts it, the second reuses it).
  const read = (first: boolean) => (first || !last ? (last = source.snapshot().catch(() => [])) : last);
  new promClient.Gauge({
    name: 'tollbooth_batch_channels_open',
    help: 'Batch-settlement channels with a balance left in escrow, by network.',
    labelNames: ['network'],
    registers,
    async collect() {
      this.reset();
      for (const s of await read(true)) this.set({ network: s.network }, s.open);
    },
  });
  new promClient.Gauge({
    name: 'tollbooth_batch_unclaimed_atomic',
    help: 'Value charged on batch-settlement channels and not yet claimed on chain (token base units), by network.',
    labelNames: ['network'],
    registers,
    async collect() {
      this.reset();
      for (const s of await read(false)) this.set({ network: s.network }, Number(s.unclaimed));
    },
  });
  new promClient.Gauge({
    name: 'tollbooth_batch_operations_in_doubt',
    help: 'Batch-settlement claims, settles and refunds whose outcome is not recorded yet: under way, or left by a stopped process until the next round closes them. `tollbooth receipts` lists them as pending.',
    labelNames: ['network'],
    registers,
    async collect() {
      this.reset();
      for (const s of await source.inDoubt().catch(() => [])) this.set({ network: s.network }, s.count);
    },
  });
  const seconds = new promClient.Histogram({
    name: 'tollbooth_batch_operation_seconds',
    help: 'Duration of batch-settlement claims, settles and refunds through the facilitator (transaction included).',
    labelNames: ['operation', 'network', 'outcome'],
    buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120],
    registers,
  });
  const failures = new promClient.Counter({
    name: 'tollbooth_batch_operation_failures_total',
    help: 'Batch-settlement claims, settles and refunds that failed (retried at the next round).',
    labelNames: ['operation', 'network'],
    registers,
  });
  return {
    operation(op, network, s, ok) {
      seconds.observe({ operation: op, network, outcome: ok ? 'ok' : 'failed' }, s);
      if (!ok) failures.inc({ operation: op, network });
    },
  };
}
