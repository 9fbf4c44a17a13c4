import pg from 'pg';
import type { Row, SqlPort, Statement, WriteResult } from '../../sql/port.js';
import { errorText, isConnectionError } from './url.js';

/** PostgreSQL's type id of JSON: its values stay text, as SQLite gives them, and the shared row readers parse them. */
const JSON_OID = 114;

/** pg's type parsers, except that JSON columns arrive as their text. */
export const JSON_AS_TEXT = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === JSON_OID ? (value: string) => value : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** The statement with its `?` placeholders numbered as PostgreSQL's `$1, $2, …` (never inside a quoted literal). */
export function numbered(sql: string): string {
  let n = 0;
  let quoted = false;
  let out = '';
  for (const ch of sql) {
    if (ch === "'") quoted = !quoted;
    out += ch === '?' && !quoted ? `$${++n}` : ch;
  }
  return out;
}

/** Where the port connects and how it reports: the database named without password, and a round-trip counter. */
export interface PostgresTarget {
  /** The DATABASE_URL as `postgres://user@host:port/database`. */
  name: string;
  redact: (message: string) => string;
  onRoundTrip: () => void;
}

/**
 * The SQL port on a PostgreSQL pool. Each call is one round trip where it can be: two dependent writes become one
 * statement with a data-modifying CTE, independent writes one statement with a CTE each. Every commit is durable when
 * it returns (PostgreSQL waits for its WAL flush).
 */
export class PostgresPort implements SqlPort {
  readonly dialect = 'postgres' as const;

  constructor(
    private readonly pool: pg.Pool,
    private readonly target: PostgresTarget,
  ) {}

  async read(sql: string, args: readonly unknown[] = []): Promise<Row[]> {
    return (await this.query(sql, args)).rows;
  }

  async write(sql: string, args: readonly unknown[] = []): Promise<WriteResult> {
    const result = await this.query(sql, args);
    return { rows: result.rows, changes: result.rowCount ?? result.rows.length };
  }

  async writeThen(first: Statement, then: Statement): Promise<boolean> {
    const sql = `WITH first AS (${first.sql}) ${then.sql} WHERE EXISTS (SELECT 1 FROM first)`;
    return ((await this.query(sql, [...first.args, ...then.args])).rowCount ?? 0) > 0;
  }

  async writeEach(statements: readonly Statement[]): Promise<Row[][]> {
    if (statements.length <= 1) return Promise.all(statements.map(async (s) => (await this.write(s.sql, s.args)).rows));
    const ctes = statements.map((s, i) => `w${i} AS (${s.sql})`).join(', ');
    const rows = statements.map((_, i) => `SELECT ${i} AS i, row_to_json(w${i})::text AS r FROM w${i}`);
    const result = await this.query(
      `WITH ${ctes} ${rows.join(' UNION ALL ')}`,
      statements.flatMap((s) => s.args),
    );
    const each: Row[][] = statements.map(() => []);
    for (const row of result.rows) each[Number(row.i)]!.push(JSON.parse(String(row.r)) as Row);
    return each;
  }

  /** One transaction on one connection: a transaction-scoped advisory lock, then the statement. */
  async writeLocked(lock: string, statement: Statement): Promise<WriteResult> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw this.wrap(err);
    }
    let broken: Error | undefined;
    const trip = (sql: string, args: readonly unknown[] = []) => {
      this.target.onRoundTrip();
      return client.query(sql, args as unknown[]);
    };
    try {
      await trip('BEGIN');
      await trip('SELECT pg_advisory_xact_lock(hashtext($1))', [`tollbooth.${lock}`]);
      const result = await trip(numbered(statement.sql), statement.args);
      await trip('COMMIT');
      return { rows: result.rows as Row[], changes: result.rowCount ?? result.rows.length };
    } catch (err) {
      await client.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw this.wrap(err);
    } finally {
      client.release(broken);
    }
  }

  async durable(): Promise<void> {}

  async close(): Promise<void> {
    await this.pool.end();
  }

  /** Runs one statement; a lost or refused connection becomes an error naming the database (never its password). */
  private async query(sql: string, args: readonly unknown[]): Promise<pg.QueryResult<Row>> {
    this.target.onRoundTrip();
    try {
      return await this.pool.query<Row>(numbered(sql), args as unknown[]);
    } catch (err) {
      throw this.wrap(err);
    }
  }

  private wrap(err: unknown): Error {
    const message = this.target.redact(errorText(err));
    if (isConnectionError(err))
      return new Error(`PostgreSQL store unavailable (${this.target.name}): ${message}`, { cause: err });
    if (err instanceof Error && message === err.message) return err;
    return new Error(message);
  }
}
