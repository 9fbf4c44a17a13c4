/**
 * The schema of a real database read from its own catalogs (SQLite: sqlite_master and the table/index pragmas;
 * PostgreSQL: information_schema and pg_index), in one shape so two databases can be compared.
 */
import Database from 'libsql';
import pg from 'pg';

/** A column: its type family (text, integer, real) and whether it may be NULL. */
export interface ColumnShape {
  type: 'text' | 'integer' | 'real';
  notNull: boolean;
}

/** Tables (columns, primary key, named CHECK constraints) and indexes (by name) of one database. */
export interface SchemaShape {
  tables: Record<string, { columns: Record<string, ColumnShape>; primaryKey: string[]; checks: string[] }>;
  indexes: Record<string, { table: string; unique: boolean; partial: boolean; columns: string[] }>;
}

/** What each dialect's declared type stores (SQLite keeps JSON and times as text). */
const FAMILY: Record<string, ColumnShape['type']> = {
  TEXT: 'text',
  INTEGER: 'integer',
  REAL: 'real',
  text: 'text',
  json: 'text',
  'timestamp with time zone': 'text',
  integer: 'integer',
  bigint: 'integer',
  'double precision': 'real',
};

const family = (declared: string): ColumnShape['type'] => {
  const type = FAMILY[declared];
  if (!type) throw new Error(`no type family for ${declared}`);
  return type;
};

type Row = Record<string, unknown>;

/** The schema of the SQLite file at `path` (its own bookkeeping tables left out). */
export function sqliteShape(path: string): SchemaShape {
  const db = new Database(path, { readonly: true });
  try {
    const all = (sql: string) => db.prepare(sql).all() as Row[];
    const shape: SchemaShape = { tables: {}, indexes: {} };
    const tables = all("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
    for (const { name, sql } of tables) {
      const columns = all(`PRAGMA table_info(${String(name)})`);
      shape.tables[String(name)] = {
        columns: Object.fromEntries(
          columns.map((c) => [
            String(c.name),
            // An INTEGER PRIMARY KEY is the rowid: never NULL.
            { type: family(String(c.type)), notNull: Boolean(c.notnull) || (Number(c.pk) > 0 && c.type === 'INTEGER') },
          ]),
        ),
        primaryKey: columns
          .filter((c) => Number(c.pk) > 0)
          .sort((a, b) => Number(a.pk) - Number(b.pk))
          .map((c) => String(c.name)),
        checks: [...String(sql).matchAll(/CONSTRAINT\s+(\w+)\s+CHECK/gi)].map((m) => m[1]!).sort(),
      };
      for (const index of all(`PRAGMA index_list(${String(name)})`)) {
        if (index.origin !== 'c') continue; // made by a PRIMARY KEY or UNIQUE clause, not by CREATE INDEX
        const keys = all(`PRAGMA index_xinfo(${String(index.name)})`).filter((k) => Number(k.key) === 1);
        shape.indexes[String(index.name)] = {
          table: String(name),
          unique: Boolean(index.unique),
          partial: Boolean(index.partial),
          columns: keys.map((k) => `${String(k.name)}${Number(k.desc) ? ' DESC' : ''}`),
        };
      }
    }
    return shape;
  } finally {
    db.close();
  }
}

const PG_INDEXES = `
  SELECT t.relname AS "table", i.relname AS name, ix.indisunique AS "unique", ix.indpred IS NOT NULL AS partial,
    array_agg(a.attname || CASE WHEN (ix.indoption[k.n - 1] & 1) = 1 THEN ' DESC' ELSE '' END ORDER BY k.n) AS columns
  FROM pg_index ix
  JOIN pg_class i ON i.oid = ix.indexrelid
  JOIN pg_class t ON t.oid = ix.indrelid
  JOIN pg_namespace ns ON ns.oid = t.relnamespace
  CROSS JOIN LATERAL unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
  JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
  WHERE ns.nspname = current_schema() AND NOT ix.indisprimary AND t.relname <> 'schema_migrations'
  GROUP BY t.relname, i.relname, ix.indisunique, ix.indpred`;

/** The schema of the PostgreSQL schema `url` connects to (its `schema_migrations` left out). */
export async function postgresShape(url: string): Promise<SchemaShape> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rows = async (sql: string) => (await client.query<Row>(sql)).rows;
    const shape: SchemaShape = { tables: {}, indexes: {} };
    const mine = "table_schema = current_schema() AND table_name <> 'schema_migrations'";
    for (const t of await rows(`SELECT table_name FROM information_schema.tables WHERE ${mine}`))
      shape.tables[String(t.table_name)] = { columns: {}, primaryKey: [], checks: [] };
    for (const c of await rows(
      `SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns WHERE ${mine}`,
    ))
      shape.tables[String(c.table_name)]!.columns[String(c.column_name)] = {
        type: family(String(c.data_type)),
        notNull: c.is_nullable === 'NO',
      };
    const constraints = await rows(
      `SELECT tc.table_name, tc.constraint_name, tc.constraint_type, ku.column_name, ku.ordinal_position
       FROM information_schema.table_constraints tc
       LEFT JOIN information_schema.key_column_usage ku
         ON ku.constraint_name = tc.constraint_name AND ku.table_schema = tc.table_schema AND ku.table_name = tc.table_name
       WHERE tc.table_schema = current_schema() AND tc.table_name <> 'schema_migrations'
       ORDER BY tc.constraint_name, ku.ordinal_position`,
    );
    for (const c of constraints) {
      const table = shape.tables[String(c.table_name)]!;
      if (c.constraint_type === 'PRIMARY KEY') table.primaryKey.push(String(c.column_name));
      if (c.constraint_type === 'CHECK' && !String(c.constraint_name).endsWith('_not_null'))
        table.checks.push(String(c.constraint_name));
    }
    for (const table of Object.values(shape.tables)) table.checks.sort();
    for (const i of await rows(PG_INDEXES))
      shape.indexes[String(i.name)] = {
        table: String(i.table),
        unique: Boolean(i.unique),
        partial: Boolean(i.partial),
        columns: i.columns as string[],
      };
    return shape;
  } finally {
    await client.end();
  }
}
