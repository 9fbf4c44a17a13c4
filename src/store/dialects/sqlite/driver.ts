/**
 * The SQLite driver under the embedded store. Where this Node has `node:sqlite` with what the store needs (a
 * statement's result columns, the connection's transaction state: Node 22.16 and later, and 24), the store uses it:
 * SQLite built into Node, about 2 MB resident where the `libsql` package's native library holds about 12 MB and takes
 * a dozen milliseconds to load. Elsewhere (Node 20) it uses `libsql`. Both are SQLite with the same file format, WAL
 * and locking, so processes on either driver share one file, and a file moves between Node versions as it is.
 */
import { lazyRequire } from '../../../shared/lazy.js';

/** A result row, by column name. */
export type Row = Record<string, unknown>;

/** One prepared statement, reused for every run. */
export interface SqliteStatement {
  /** Whether it returns rows (a query, or a write with `RETURNING`). */
  readonly reader: boolean;
  all(...args: unknown[]): Row[];
  run(...args: unknown[]): { changes: number | bigint };
}

/** One connection to a SQLite file. */
export interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
  /** Runs SQL text with several statements and no arguments. */
  exec(sql: string): void;
  readonly inTransaction: boolean;
  close(): void;
}

/** The drivers: Node's own SQLite, or the `libsql` package. */
export type SqliteDriver = 'node:sqlite' | 'libsql';

/** `libsql`'s connection class (better-sqlite3's API), loaded only where it is the driver used. */
type LibsqlDatabase = new (path: string, options: { timeout: number }) => SqliteConnection;
const libsql = lazyRequire<LibsqlDatabase>('libsql');

/** A value `node:sqlite` binds to a parameter. */
type SQLInputValue = null | number | bigint | string | ArrayBufferView;

/** The part of `node:sqlite` used here (its types are not in the @types/node of Node 20). */
interface StatementSync {
  columns(): unknown[];
  all(...args: SQLInputValue[] | [Record<string, SQLInputValue>]): unknown[];
  run(...args: SQLInputValue[] | [Record<string, SQLInputValue>]): { changes: number | bigint };
}
interface DatabaseSync {
  prepare(sql: string): StatementSync;
  exec(sql: string): void;
  readonly isTransaction: boolean;
  close(): void;
}
interface NodeSqlite {
  DatabaseSync: { new (path: string, options: { timeout: number }): DatabaseSync; prototype: object };
  StatementSync?: { prototype: { columns?: unknown } };
}

let nodeSqlite: NodeSqlite | null | undefined;

/**
 * `node:sqlite` when this Node has it with the statement columns and transaction state the store reads, else null.
 * Node 22 reports SQLite as experimental when it first loads: that one warning is not printed (stderr carries the
 * logs, and MCP hosts show them); every other warning is.
 */
function loadNodeSqlite(): NodeSqlite | null {
  if (nodeSqlite !== undefined) return nodeSqlite;
  const emit = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (/^SQLite is an experimental feature/.test(text)) return;
    (emit as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    const loaded = process.getBuiltinModule?.('node:sqlite') as NodeSqlite | undefined;
    nodeSqlite = loaded !== undefined && complete(loaded) ? loaded : null;
  } catch {
    nodeSqlite = null;
  } finally {
    process.emitWarning = emit;
  }
  return nodeSqlite;
}

/** Whether this `node:sqlite` has a statement's result columns and the connection's transaction state. */
function complete(sqlite: NodeSqlite): boolean {
  if (typeof sqlite.StatementSync?.prototype.columns !== 'function') return false;
  const probe = new sqlite.DatabaseSync(':memory:', { timeout: 0 });
  try {
    return typeof probe.isTransaction === 'boolean';
  } finally {
    probe.close();
  }
}

/** The drivers this Node can use, the preferred first. */
export function availableDrivers(): SqliteDriver[] {
  return loadNodeSqlite() ? ['node:sqlite', 'libsql'] : ['libsql'];
}

/** Why this Node cannot use `driver` (undefined when it can). */
export function driverUnavailable(driver: SqliteDriver): string | undefined {
  if (availableDrivers().includes(driver)) return undefined;
  return `${driver} needs Node 22.16 or later (this is Node ${process.versions.node})`;
}

/** Opens `path` with `driver`, waiting up to `timeoutMs` for a writer in another process. */
export function connect(path: string, timeoutMs: number, driver: SqliteDriver): SqliteConnection {
  if (driver === 'libsql') return new (libsql())(path, { timeout: timeoutMs });
  const sqlite = loadNodeSqlite();
  if (!sqlite) throw new Error('node:sqlite is not available on this Node; use libsql');
  return new NodeConnection(new sqlite.DatabaseSync(path, { timeout: timeoutMs }));
}

/** A `node:sqlite` statement behind the store's statement interface. */
class NodeStatement implements SqliteStatement {
  readonly reader: boolean;

  constructor(private readonly statement: StatementSync) {
    this.reader = statement.columns().length > 0;
  }

  all(...args: unknown[]): Row[] {
    return this.statement.all(...(args as SQLInputValue[])) as Row[];
  }

  run(...args: unknown[]): { changes: number | bigint } {
    return this.statement.run(...(args as SQLInputValue[]));
  }
}

/** A `node:sqlite` connection behind the store's connection interface. */
class NodeConnection implements SqliteConnection {
  constructor(private readonly db: DatabaseSync) {}

  prepare(sql: string): SqliteStatement {
    return new NodeStatement(this.db.prepare(sql));
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  get inTransaction(): boolean {
    return this.db.isTransaction;
  }

  close(): void {
    this.db.close();
  }
}
