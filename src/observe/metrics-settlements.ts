import type { Registry } from 'prom-client';
import { promClient } from './metrics-process.js';

/** What the settlement gauges read at each scrape (the runtime's outbox). */
export interface SettlementsSource {
  /** Calls being settled right now. */
  readonly settling: number;
  /** Settlement outcomes not stored yet. */
  readonly size: number;
  /** Of those, the ones the local journal file holds. */
  readonly journaled: number;
}

/**
 * Registers the gauges of payments whose outcome is not stored yet: in doubt (being settled, or settled and waiting
 * to be stored), waiting in the outbox, and held by the local journal; read from `source` at each scrape.
 */
export function watchSettlements(registry: Registry, source: SettlementsSource): void {
  const registers = [registry];
  new promClient.Gauge({
    name: 'tollbooth_payments_in_doubt',
    help: 'Paid calls of this process whose settlement outcome is not stored yet: being settled, or settled (or pending) and waiting in the outbox. `tollbooth receipts` lists them as in_doubt.',
    registers,
    collect() {
      this.set(source.settling + source.size);
    },
  });
  new promClient.Gauge({
    name: 'tollbooth_settlement_outbox_entries',
    help: 'Settlement outcomes (settled or pending) the store refused so far, retried in the background until stored.',
    registers,
    collect() {
      this.set(source.size);
    },
  });
  new promClient.Gauge({
    name: 'tollbooth_settlement_journal_entries',
    help: 'Settlement outcomes held in the local journal (DATA_DIR/settled-journal-<pid>.ndjson), replayed at start-up; 0 once the store has them all.',
    registers,
    collect() {
      this.set(source.journaled);
    },
  });
}
