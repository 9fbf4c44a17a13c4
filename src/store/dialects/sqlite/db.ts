/**
 * The SQLite file behind the embedded store (its SQL port is ./port.ts), on a synchronous driver (./driver.ts: Node's
 * own `node:sqlite`, else `libsql`): each statement prepared once and reused, group commit (the writes queued during
 * one turn of the event loop run in one transaction) and durability off the event loop: a commit writes the WAL
 * without waiting for the disk (`synchronous = NORMAL`, safe from corruption, and durable across a crash of this
 * process), and {@link SqliteDb.sync} fsyncs the WAL on libuv's thread pool, one fsync at a time, each covering every
 * commit before it. What must survive a power loss waits for `sync()` (the store does this for a claim before its
 * settlement); everything else is synced within a second by a background sync.
 */
import { closeSync, fsync, openSync } from 'node:fs';
import {
  availableDrivers,
  connect,
  type Row,
  type SqliteConnection,
  type SqliteDriver,
  type SqliteStatement,
} from './driver.js';

/** Positional (`?`) or named (`:name`) arguments. */
export type Args = readonly unknown[] | Record<string, unknown>;

/** One statement with its arguments. */
export interface Statement {
  sql: string;
  args?: Args;
}

/** What a statement returned: its rows (statements that return data) and how many rows it changed (others). */
export interface ResultSet {
  rows: Row[];
  rowsAffected: number;
}

type Prepared = SqliteStatement;

/** A write waiting for the next group commit. */
interface QueuedWrite {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

/** A statement that writes and also returns rows (`INSERT … RETURNING`). */
const WRITES_AND_RETURNS = /^\s*(INSERT|UPDATE|DELETE|REPLACE)\b/i;

/** How long a commit may wait for the background sync when nothing asks for it sooner. */
const BACKGROUND_SYNC_MS = 1000;

/**
 * An argument as both drivers bind it: `undefined` as NULL and a boolean as 1 or 0 (`node:sqlite` refuses both, and
 * `libsql` aborts the process on a boolean).
 */
function bindable(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

function bindableNamed(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).map(([key, value]) => [key, bindable(value)]));
}

/** One SQLite database file in WAL mode, with a cache of prepared statements, group commit and off-loop fsync. */
export class SqliteDb {
  private readonly prepared = new Map<string, Prepared>();
  private queue: QueuedWrite[] = [];
  private flushScheduled = false;
  /** Transactions committed so far, and how many of them are known to be on disk. */
  private committed = 0;
  private synced = 0;
  /** The fsync in progress (covering commits up to `upTo`), and a next one that callers arriving meanwhile share. */
  private running: { upTo: number; done: Promise<void> } | undefined;
  private next: { done: Promise<void>; resolve: () => void; reject: (error: Error) => void } | undefined;
  private walFd: number | undefined;
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly db: SqliteConnection,
    private readonly path: string,
    /** The driver this file is open with. */
    readonly driver: SqliteDriver,
  ) {
    this.timer = setInterval(() => {
      if (this.synced < this.committed) this.sync().catch(() => undefined);
    }, BACKGROUND_SYNC_MS);
    this.timer.unref();
  }

  /**
   * Opens (or creates) the file: WAL journal, fsync off the event loop (see the module comment), 5 s wait for a writer
   * in another process; with the preferred driver here unless `driver` names one.
   */
  static open(path: string, driver: SqliteDriver = availableDrivers()[0]!): SqliteDb {
    const db = connect(path, 5000, driver);
    // First: another process may hold the write lock (migrating the file), and switching to WAL has to wait for it.
    db.exec('PRAGMA busy_timeout = 5000');
    db.exec('PRAGMA journal_mode = WAL');
    // A commit does not wait for the disk; sync() does, off the event loop. Checkpoints still sync the WAL first.
    db.exec('PRAGMA synchronous = NORMAL');
    return new SqliteDb(db, path, driver);
  }

  /** Runs one statement (in its own transaction when it writes). */
  execute(statement: string | Statement): ResultSet {
    const { sql, args } = typeof statement === 'string' ? { sql: statement, args: undefined } : statement;
    const prepared = this.statement(sql);
    const bound: unknown[] =
      args === undefined
        ? []
        : Array.isArray(args)
          ? args.map(bindable)
          : [bindableNamed(args as Record<string, unknown>)];
    if (prepared.reader) {
      const rows = prepared.all(...bound);
      if (!this.db.inTransaction && WRITES_AND_RETURNS.test(sql)) this.committed++;
      return { rows, rowsAffected: 0 };
    }
    const changes = Number(prepared.run(...bound).changes);
    if (!this.db.inTransaction) this.committed++; // a write outside a transaction commits by itself
    return { rows: [], rowsAffected: changes };
  }

  /** Runs statements in one write transaction (`BEGIN IMMEDIATE`): all of them or none. */
  batch(statements: readonly Statement[]): ResultSet[] {
    return this.inTransaction(() => statements.map((s) => this.execute(s)));
  }

  /**
   * Runs `work` (synchronous statements: all of them or none) in the next group commit, with the other writes queued
   * in this turn of the event loop; resolves with its result once the transaction committed.
   */
  write<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /**
   * One transaction for every queued write. A write that throws (rare: a full disk, a constraint) rolls the whole
   * group back, and the group is then run again one write per transaction, so the others still commit.
   */
  private flush(): void {
    this.flushScheduled = false;
    const jobs = this.queue;
    this.queue = [];
    if (jobs.length === 0) return;
    let values: unknown[];
    try {
      values = this.inTransaction(() => jobs.map((job) => job.work()));
    } catch (error) {
      if (jobs.length === 1) jobs[0]!.reject(error);
      else for (const job of jobs) this.runAlone(job);
      return;
    }
    jobs.forEach((job, i) => job.resolve(values[i]));
  }

  private runAlone(job: QueuedWrite): void {
    try {
      job.resolve(this.inTransaction(job.work));
    } catch (error) {
      job.reject(error);
    }
  }

  /**
   * Resolves once every transaction committed before the call is on disk (an fsync of the WAL on libuv's thread pool;
   * callers arriving while one runs share the next).
   */
  sync(): Promise<void> {
    const target = this.committed;
    if (this.synced >= target) return Promise.resolve();
    if (this.running && this.running.upTo >= target) return this.running.done;
    if (!this.running) return this.startSync();
    if (!this.next) {
      let resolve!: () => void;
      let reject!: (error: Error) => void;
      const done = new Promise<void>((yes, no) => {
        resolve = yes;
        reject = no;
      });
      this.next = { done, resolve, reject };
    }
    return this.next.done;
  }

  private startSync(): Promise<void> {
    const upTo = this.committed;
    try {
      this.walFd ??= openSync(`${this.path}-wal`, 'r');
    } catch (error) {
      return Promise.reject(error as Error);
    }
    const fd = this.walFd;
    const done = new Promise<void>((resolve, reject) =>
      fsync(fd, (error) => {
        this.running = undefined;
        if (error) reject(error);
        else {
          this.synced = Math.max(this.synced, upTo);
          resolve();
        }
        const next = this.next;
        this.next = undefined;
        if (next) this.sync().then(next.resolve, next.reject);
      }),
    );
    this.running = { upTo, done };
    return done;
  }

  /** Runs `work` between `BEGIN IMMEDIATE` and `COMMIT` (prepared once), rolling back if it throws. */
  private inTransaction<T>(work: () => T): T {
    this.statement('BEGIN IMMEDIATE').run();
    let value: T;
    try {
      value = work();
    } catch (error) {
      this.statement('ROLLBACK').run();
      throw error;
    }
    try {
      this.statement('COMMIT').run();
    } catch (error) {
      if (this.db.inTransaction) this.statement('ROLLBACK').run();
      throw error;
    }
    this.committed++;
    return value;
  }

  /** Runs SQL text with several statements and no arguments (schema). */
  exec(sql: string): void {
    this.db.exec(sql);
  }

  /** Commits what is queued and syncs it, then closes the file (SQLite checkpoints on the last close). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.flush();
    while (this.running || this.next || this.synced < this.committed) await this.sync().catch(() => undefined);
    this.prepared.clear();
    this.db.close();
    if (this.walFd !== undefined) closeSync(this.walFd);
    this.walFd = undefined;
  }

  private statement(sql: string): Prepared {
    let prepared = this.prepared.get(sql);
    if (!prepared) {
      prepared = this.db.prepare(sql);
      this.prepared.set(sql, prepared);
    }
    return prepared;
  }
}
