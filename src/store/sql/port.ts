/**
 * The small SQL port every store part is written over, once for both databases. Statements use `?` placeholders and
 * SQL that SQLite and PostgreSQL both accept; what differs (placeholders, types in DDL, how several statements are made
 * atomic in one round trip, locks, durability) lives in the two dialect modules under src/store/dialects/.
 */

/** A result row, by column name. JSON columns arrive as their text, time columns as text (SQLite) or a Date (PostgreSQL). */
export type Row = Record<string, unknown>;

/** The two databases a store runs on. */
export type Dialect = 'sqlite' | 'postgres';

/** One statement with `?` placeholders and its arguments. */
export interface Statement {
  sql: string;
  args: readonly unknown[];
}

/** What a writing statement returned: its rows (`RETURNING`) and how many rows it changed. */
export interface WriteResult {
  rows: Row[];
  changes: number;
}

/** A connection (or pool) to one database. */
export interface SqlPort {
  readonly dialect: Dialect;
  /** Runs a statement that only reads. */
  read(sql: string, args?: readonly unknown[]): Promise<Row[]>;
  /** Runs one writing statement, atomically. */
  write(sql: string, args?: readonly unknown[]): Promise<WriteResult>;
  /**
   * Runs `first` (a write with `RETURNING`) and, only when it returned a row, `then` (an `INSERT … SELECT` without a
   * `WHERE`), both or neither; in one round trip where the database allows. Resolves whether `then` ran.
   */
  writeThen(first: Statement, then: Statement): Promise<boolean>;
  /** Runs independent writes (each with `RETURNING`) atomically, in one round trip where the database allows. */
  writeEach(statements: readonly Statement[]): Promise<Row[][]>;
  /** Runs one write while holding the named lock: writers naming the same lock, in any process, take turns. */
  writeLocked(lock: string, statement: Statement): Promise<WriteResult>;
  /** Resolves once every write made so far survives a power loss. */
  durable(): Promise<void>;
  close(): Promise<void>;
}
