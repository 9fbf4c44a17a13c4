/**
 * The SQLite file behind the embedded store: `libsql`'s synchronous (better-sqlite3 style) API with each statement
 * prepared once and reused, and group commit: the writes queued during one turn of the event loop run in one
 * transaction, so concurrent paid calls share one fsync instead of paying one each (every commit stays durable:
 * `synchronous = FULL`, and a write's promise resolves only after its commit).
 */
import Database from 'libsql';

/** A result row, by column name. */
export type Row = Record<string, unknown>;

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

type Prepared = Database.Statement<unknown[]>;

/** A write waiting for the next group commit. */
interface QueuedWrite {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

/** One SQLite database file in WAL mode, with a cache of prepared statements and group commit. */
export class SqliteDb {
  private readonly prepared = new Map<string, Prepared>();
  private queue: QueuedWrite[] = [];
  private flushScheduled = false;

  private constructor(private readonly db: Database.Database) {}

  /** Opens (or creates) the file: WAL journal, full fsync on commit, 5 s wait for a writer in another process. */
  static open(path: string): SqliteDb {
    const db = new Database(path, { timeout: 5000 });
    db.exec('PRAGMA journal_mode = WAL');
    db.exec(`PRAGMA synchronous = ${process.env.SQLITE_SYNC_EXPERIMENT ?? 'FULL'}`);
    db.exec('PRAGMA busy_timeout = 5000');
    return new SqliteDb(db);
  }

  /** Runs one statement (in its own transaction when it writes). */
  execute(statement: string | Statement): ResultSet {
    const { sql, args } = typeof statement === 'string' ? { sql: statement, args: undefined } : statement;
    const prepared = this.statement(sql);
    const bound: unknown[] = args === undefined ? [] : Array.isArray(args) ? [...args] : [args];
    if (prepared.reader) return { rows: prepared.all(...bound) as Row[], rowsAffected: 0 };
    return { rows: [], rowsAffected: prepared.run(...bound).changes };
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
    return value;
  }

  /** Runs SQL text with several statements and no arguments (schema). */
  exec(sql: string): void {
    this.db.exec(sql);
  }

  /** Commits what is queued, then closes the file. */
  close(): void {
    this.flush();
    this.prepared.clear();
    this.db.close();
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
