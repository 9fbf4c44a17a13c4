/**
 * The local journal of settlement outcomes the store has not taken yet (`DATA_DIR/settled-journal-<pid>.ndjson`, one
 * file per process, so processes sharing a data directory never compact each other's): one JSON line per event,
 * appended and fsynced before the caller is answered, so a crash or a kill loses none of them. It holds what the store
 * would (receipts, the pending payment and output, an idempotent result), never a key or a credential.
 */
import { mkdir, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { PaymentClaim, PendingDetails, ReceiptRecord, StoredResult } from '../../store/ledger.js';

/** A settlement outcome waiting to be stored: settled (with its receipt) or pending (with what finishing it needs). */
export type OutboxEntry =
  | {
      type: 'settled';
      receipt: ReceiptRecord;
      /** The idempotent result to store with it, when the call carried a payment id. */
      idempotency?: { id: string; result: StoredResult };
    }
  | {
      type: 'pending';
      claim: PaymentClaim;
      details: PendingDetails;
      /** The payment id to forget, so the client may retry with it. */
      releaseIdempotency?: string;
      /** When the outcome became known (ISO). */
      at: string;
    };

/** One line of the journal: an outcome kept, or the replay key of one since stored. */
type JournalLine = { op: 'add'; entry: OutboxEntry } | { op: 'done'; key: string };

/** The replay key an outcome belongs to. */
export const entryKey = (entry: OutboxEntry): string =>
  entry.type === 'settled' ? entry.receipt.replayKey : entry.claim.replayKey;

/** When an outcome became known (ISO). */
export const entryTime = (entry: OutboxEntry): string =>
  entry.type === 'settled' ? entry.receipt.createdAt : entry.at;

const FILE = /^settled-journal-(\d+)\.ndjson$/;

/** Where a data directory keeps the journal of the process `pid` (this one by default). */
export function journalPath(dataDir: string, pid = process.pid): string {
  return join(dataDir, `settled-journal-${pid}.ndjson`);
}

/** Whether the process `pid` runs (its journal is its own to replay and compact). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The journal files of a data directory with the process each belongs to. */
export async function journalFiles(dataDir: string): Promise<Array<{ path: string; pid: number }>> {
  let names: string[];
  try {
    names = await readdir(dataDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names.flatMap((name) => {
    const pid = FILE.exec(name)?.[1];
    return pid ? [{ path: join(dataDir, name), pid: Number(pid) }] : [];
  });
}

/** The outcomes every journal of a data directory still holds (what `tollbooth receipts` lists). */
export async function readJournals(dataDir: string): Promise<OutboxEntry[]> {
  const files = await journalFiles(dataDir);
  return (await Promise.all(files.map((f) => readJournal(f.path)))).flat();
}

/** The outcomes a journal file still holds (added, not yet marked stored), oldest first; a torn last line is skipped. */
export async function readJournal(path: string): Promise<OutboxEntry[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const open = new Map<string, OutboxEntry>();
  for (const raw of text.split('\n')) {
    if (!raw.trim()) continue;
    let line: JournalLine;
    try {
      line = JSON.parse(raw) as JournalLine;
    } catch {
      continue; // a line cut short by a crash in the middle of its write: its outcome was never acknowledged
    }
    if (line.op === 'add') open.set(entryKey(line.entry), line.entry);
    else if (line.op === 'done') open.delete(line.key);
  }
  return [...open.values()];
}

/** Appends to (and compacts) one journal file; every write is fsynced before it resolves, one at a time. */
export class SettledJournal {
  /** Replay keys added and not yet marked stored. */
  private readonly open = new Set<string>();
  private tail: Promise<unknown> = Promise.resolve();

  constructor(readonly path: string) {}

  /** How many outcomes the file holds that are not stored yet. */
  get size(): number {
    return this.open.size;
  }

  /** Whether the file holds this replay key's outcome. */
  has(key: string): boolean {
    return this.open.has(key);
  }

  /** Keeps an outcome: resolves once its line is on disk. */
  add(entry: OutboxEntry): Promise<void> {
    return this.serial(async () => {
      await this.append(`${JSON.stringify({ op: 'add', entry } satisfies JournalLine)}\n`);
      this.open.add(entryKey(entry));
    });
  }

  /** Marks an outcome stored; once none is left the file is removed. */
  done(key: string): Promise<void> {
    return this.serial(async () => {
      if (!this.open.has(key)) return;
      if (this.open.size === 1) await this.rewrite([]);
      else await this.append(`${JSON.stringify({ op: 'done', key } satisfies JournalLine)}\n`);
      this.open.delete(key);
    });
  }

  /**
   * Replaces the file, which holds at least these outcomes, with exactly them (start-up compaction): a new file
   * fsynced, then renamed over. If that fails the old file stays, and still holds them.
   */
  replace(entries: readonly OutboxEntry[]): Promise<void> {
    return this.serial(async () => {
      this.open.clear();
      for (const entry of entries) this.open.add(entryKey(entry));
      await this.rewrite(entries);
    });
  }

  private serial(work: () => Promise<void>): Promise<void> {
    const run = this.tail.then(work, work);
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async append(text: string): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    const file = await open(this.path, 'a', 0o600);
    try {
      await file.writeFile(text, 'utf8');
      await file.datasync();
    } finally {
      await file.close();
    }
  }

  private async rewrite(entries: readonly OutboxEntry[]): Promise<void> {
    if (entries.length === 0) {
      await unlink(this.path).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
      return this.syncDir();
    }
    const text = entries.map((entry) => `${JSON.stringify({ op: 'add', entry } satisfies JournalLine)}\n`).join('');
    await mkdir(dirname(this.path), { recursive: true });
    const next = `${this.path}.next`;
    const file = await open(next, 'w', 0o600);
    try {
      await file.writeFile(text, 'utf8');
      await file.datasync();
    } finally {
      await file.close();
    }
    await rename(next, this.path);
    await this.syncDir();
  }

  private async syncDir(): Promise<void> {
    const dir = await open(dirname(this.path), 'r').catch(() => undefined);
    if (!dir) return;
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }
}
