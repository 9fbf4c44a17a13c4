import type { Row, SqlPort, Statement, WriteResult } from '../../sql/port.js';
import type { SqliteDb } from './db.js';

/**
 * The SQL port on one SQLite file. Every write goes through the file's group commit (the writes queued in one turn of
 * the event loop share a transaction); SQLite takes its one write lock before a writing statement reads, so a
 * conditional write sees every other write before it, in this process or another.
 */
export class SqlitePort implements SqlPort {
  readonly dialect = 'sqlite' as const;

  constructor(private readonly db: SqliteDb) {}

  async read(sql: string, args: readonly unknown[] = []): Promise<Row[]> {
    return this.db.execute({ sql, args }).rows;
  }

  write(sql: string, args: readonly unknown[] = []): Promise<WriteResult> {
    return this.db.write(() => this.run({ sql, args }));
  }

  /** Both statements in one transaction of the group commit; `then` only when `first` returned a row. */
  writeThen(first: Statement, then: Statement): Promise<boolean> {
    return this.db.write(() => {
      if (this.run(first).rows.length === 0) return false;
      this.run(then);
      return true;
    });
  }

  writeEach(statements: readonly Statement[]): Promise<Row[][]> {
    return this.db.write(() => statements.map((s) => this.run(s).rows));
  }

  /** SQLite's write lock already makes every writer take turns. */
  writeLocked(_lock: string, statement: Statement): Promise<WriteResult> {
    return this.write(statement.sql, statement.args);
  }

  durable(): Promise<void> {
    return this.db.sync();
  }

  close(): Promise<void> {
    return this.db.close();
  }

  /** One statement, synchronously: a `RETURNING` statement reports its rows as the rows it changed. */
  private run(statement: Statement): WriteResult {
    const result = this.db.execute(statement);
    return { rows: result.rows, changes: result.rows.length || result.rowsAffected };
  }
}
