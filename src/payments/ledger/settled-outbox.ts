import type { Logger } from '../../shared/log.js';
import type { PaymentLedger } from '../../store/ledger.js';
import { unlink } from 'node:fs/promises';
import {
  entryKey,
  journalFiles,
  journalPath,
  processAlive,
  readJournal,
  SettledJournal,
  type OutboxEntry,
} from './settled-journal.js';

/** The ledger writes an outcome needs. */
export type OutboxLedger = Pick<
  PaymentLedger,
  'completePayment' | 'completeIdempotency' | 'markPaymentPending' | 'releaseIdempotency'
>;

/** How long the background retry waits after a failed round: doubling from `minDelayMs` up to `maxDelayMs`. */
export interface OutboxTiming {
  minDelayMs: number;
  maxDelayMs: number;
}

const DEFAULT_TIMING: OutboxTiming = { minDelayMs: 200, maxDelayMs: 30_000 };
/** While flushing at shutdown, rounds are this far apart. */
const FLUSH_DELAY_MS = 250;

/** Writes one outcome to the store; every step is idempotent, so writing it again after a crash changes nothing. */
async function write(ledger: OutboxLedger, entry: OutboxEntry): Promise<void> {
  switch (entry.type) {
    case 'settled':
      await ledger.completePayment(entry.receipt);
      if (entry.idempotency) await ledger.completeIdempotency(entry.idempotency.id, entry.idempotency.result);
      return;
    case 'pending':
      await ledger.markPaymentPending(entry.claim.replayKey, entry.details);
      if (entry.releaseIdempotency) await ledger.releaseIdempotency(entry.releaseIdempotency);
      return;
  }
}

/**
 * Keeps every settlement outcome until the store has it. The outcome is written at once; when that fails it goes to
 * the local journal (fsynced before the caller is answered) and is retried in the background with backoff, never
 * dropped; at shutdown the outbox flushes within a time limit, and the journal is replayed at the next start.
 */
export class SettledOutbox {
  private readonly waiting = new Map<string, OutboxEntry>();
  private settlingCount = 0;
  private loop: Promise<void> | undefined;
  private closed = false;
  private wake: () => void = () => undefined;

  private constructor(
    private readonly ledger: OutboxLedger,
    private readonly journal: SettledJournal,
    private readonly log: Logger,
    private readonly timing: OutboxTiming,
  ) {}

  /**
   * Opens this process's journal in `dataDir` and, before anything is served, replays into the store the journals of
   * processes that no longer run (this one's included, after a restart with the same pid); what the store still
   * refuses moves into this process's journal and is retried.
   */
  static async open(
    dataDir: string,
    ledger: OutboxLedger,
    log: Logger,
    timing: OutboxTiming = DEFAULT_TIMING,
  ): Promise<SettledOutbox> {
    const outbox = new SettledOutbox(ledger, new SettledJournal(journalPath(dataDir)), log, timing);
    const left = (await journalFiles(dataDir)).filter((f) => f.pid === process.pid || !processAlive(f.pid));
    const kept = (await Promise.all(left.map((f) => readJournal(f.path)))).flat();
    if (kept.length === 0) return outbox;
    for (const entry of kept) outbox.waiting.set(entryKey(entry), entry);
    await outbox.round();
    try {
      await outbox.journal.replace([...outbox.waiting.values()]);
      for (const f of left) if (f.path !== outbox.journal.path) await unlink(f.path);
    } catch (err) {
      log.warn('could not compact the settlement journal; it is replayed again next time', {
        error: String((err as Error)?.message ?? err),
      });
    }
    log.warn('replayed the settlement journal', {
      journals: left.map((f) => f.path),
      outcomes: kept.length,
      stored: kept.length - outbox.waiting.size,
      waiting: outbox.waiting.size,
    });
    if (outbox.waiting.size > 0) outbox.start();
    return outbox;
  }

  /** Outcomes not stored yet (in memory, and in the journal when it could be written). */
  get size(): number {
    return this.waiting.size;
  }

  /** Whether this replay key's outcome is known here and waits for the store (the stale-claim pass may skip it). */
  holds(key: string): boolean {
    return this.waiting.has(key);
  }

  /** Outcomes the journal file holds that are not stored yet. */
  get journaled(): number {
    return this.journal.size;
  }

  /** Calls being settled right now (from the facilitator request until their outcome is kept). */
  get settling(): number {
    return this.settlingCount;
  }

  /** Counts a settlement under way until `work` ends: its claim is in doubt meanwhile. */
  async settlingWhile<T>(work: () => Promise<T>): Promise<T> {
    this.settlingCount++;
    try {
      return await work();
    } finally {
      this.settlingCount--;
    }
  }

  /**
   * Stores an outcome now or keeps it: when the store refuses, the outcome is journaled (resolving once it is on
   * disk) and retried in the background until stored. Never throws.
   */
  async keep(entry: OutboxEntry): Promise<'stored' | 'kept'> {
    const key = entryKey(entry);
    try {
      if (this.closed) throw new Error('the outbox is closed');
      await write(this.ledger, entry);
      return 'stored';
    } catch (err) {
      this.log.error('could not store a settlement outcome; it is journaled and retried until stored', {
        key,
        outcome: entry.type,
        transaction: entry.type === 'settled' ? entry.receipt.transaction : entry.details.transaction,
        error: (err as Error).message,
      });
      this.waiting.set(key, entry);
      await this.journalize(entry);
      if (!this.closed) this.start();
      return 'kept';
    }
  }

  /**
   * Stops retrying in the background and tries to store what is left until `timeoutMs` passed; whatever is still
   * unstored stays in the journal for the next start. Resolves whether everything was stored.
   */
  async close(timeoutMs: number): Promise<boolean> {
    this.closed = true;
    this.wake();
    await this.loop;
    const deadline = Date.now() + timeoutMs;
    while (this.waiting.size > 0 && !(await this.round()) && Date.now() + FLUSH_DELAY_MS < deadline)
      await new Promise((resolve) => setTimeout(resolve, FLUSH_DELAY_MS));
    for (const entry of this.waiting.values()) await this.journalize(entry);
    if (this.waiting.size > 0)
      this.log.error('settlement outcomes not stored at shutdown stay in the journal and are replayed at start-up', {
        journal: this.journal.path,
        waiting: this.waiting.size,
        journaled: this.journal.size,
      });
    return this.waiting.size === 0;
  }

  /** Writes every waiting outcome once, in order, stopping at the first failure; resolves whether all were stored. */
  private async round(): Promise<boolean> {
    for (const [key, entry] of [...this.waiting]) {
      try {
        await write(this.ledger, entry);
      } catch (err) {
        this.log.warn('the store still refuses a settlement outcome; retrying later', {
          key,
          waiting: this.waiting.size,
          error: (err as Error).message,
        });
        await this.journalize(entry);
        return false;
      }
      this.waiting.delete(key);
      await this.journal.done(key).catch((err: unknown) =>
        this.log.warn('could not mark a stored outcome in the settlement journal (it is replayed harmlessly)', {
          key,
          error: String((err as Error)?.message ?? err),
        }),
      );
      this.log.info('stored a settlement outcome that had waited', { key, outcome: entry.type });
    }
    return true;
  }

  /** Journals an outcome not on disk yet; a journal that cannot be written is logged, the outcome stays in memory. */
  private async journalize(entry: OutboxEntry): Promise<void> {
    if (this.journal.has(entryKey(entry))) return;
    try {
      await this.journal.add(entry);
    } catch (err) {
      this.log.error('could not write the settlement journal; the outcome is kept in memory only', {
        key: entryKey(entry),
        journal: this.journal.path,
        error: (err as Error).message,
      });
    }
  }

  /** Starts the background retry unless it runs. */
  private start(): void {
    this.loop ??= this.retry().finally(() => (this.loop = undefined));
  }

  private async retry(): Promise<void> {
    let delay = this.timing.minDelayMs;
    while (!this.closed && this.waiting.size > 0) {
      // Jitter keeps several instances from retrying in step against a store that is coming back.
      await this.sleep(delay / 2 + Math.random() * (delay / 2));
      if (this.closed) return;
      delay = (await this.round()) ? this.timing.minDelayMs : Math.min(delay * 2, this.timing.maxDelayMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
