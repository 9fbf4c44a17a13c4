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
    return this.db.transaction(() => statements.map((s) => this.execute(s))).immediate();
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

  /** One transaction for every queued write; each write in its own savepoint, so a failing one leaves the others. */
  private flush(): void {
    this.flushScheduled = false;
    const jobs = this.queue;
    this.queue = [];
    if (jobs.length === 0) return;
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      this.statement('BEGIN IMMEDIATE').run();
    } catch (error) {
      for (const job of jobs) job.reject(error);
      return;
    }
    for (const job of jobs) {
      this.statement('SAVEPOINT queued_write').run();
      try {
        outcomes.push({ ok: true, value: job.work() });
        this.statement('RELEASE queued_write').run();
      } catch (error) {
        this.statement('ROLLBACK TO queued_write').run();
        this.statement('RELEASE queued_write').run();
        outcomes.push({ ok: false, error });
      }
    }
    try {
      this.statement('COMMIT').run();
    } catch (error) {
      try {
        this.statement('ROLLBACK').run();
      } catch {
        /* already rolled back */
      }
      for (const job of jobs) job.reject(error);
      return;
    }
    jobs.forEach((job, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) job.resolve(outcome.value);
      else job.reject(outcome.error);
    });
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
