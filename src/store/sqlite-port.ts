/**
 * The SQLite file behind the embedded store: `libsql`'s synchronous (better-sqlite3 style) API with each statement
 * prepared once and reused. A paid call writes twice (claim, receipt); preparing and converting rows on every
 * statement was most of the store's cost per call.
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

/** One SQLite database file in WAL mode, with a cache of prepared statements. */
export class SqliteDb {
  private readonly prepared = new Map<string, Prepared>();

  private constructor(private readonly db: Database.Database) {}

  /** Opens (or creates) the file: WAL journal, full fsync on commit, 5 s wait for a writer in another process. */
  static open(path: string): SqliteDb {
    const db = new Database(path, { timeout: 5000 });
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = FULL');
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

  /** Runs SQL text with several statements and no arguments (schema). */
  exec(sql: string): void {
    this.db.exec(sql);
  }

  close(): void {
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
