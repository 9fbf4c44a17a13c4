import type { Dialect } from './port.js';

/** One numbered schema change: its DDL statements, written once for both dialects (see ./schema.ts). */
export interface Migration {
  version: number;
  name: string;
  sql: readonly string[];
}

/** What a start-up migration run found and did. */
export interface MigrationReport {
  applied: number[];
  /** Versions recorded in the database that this release does not know (a newer release migrated it). */
  unknown: number[];
}

/** Column types as each dialect spells them. */
const TYPES: Record<Dialect, Record<string, string>> = {
  postgres: {
    json: 'JSON',
    time: 'TIMESTAMPTZ',
    double: 'DOUBLE PRECISION',
    bigint: 'BIGINT',
    serial: 'BIGSERIAL PRIMARY KEY',
    sequence: 'BIGSERIAL',
  },
  // SQLite keeps JSON and ISO times as text; a number that orders rows is written by the store (see ../sql/spends.ts).
  sqlite: {
    json: 'TEXT',
    time: 'TEXT',
    double: 'REAL',
    bigint: 'INTEGER',
    serial: 'INTEGER PRIMARY KEY AUTOINCREMENT',
    sequence: 'INTEGER NOT NULL',
  },
};

/** A statement of ./schema.ts in the dialect's own column types. */
export function render(sql: string, dialect: Dialect): string {
  return sql.replace(/\{(\w+)\}/g, (token, name: string) => {
    const type = TYPES[dialect][name];
    if (!type) throw new Error(`unknown column type ${token} in a migration`);
    return type;
  });
}

/** The migrations a database still needs, each with its statements in the dialect's spelling, oldest first. */
export interface MigrationPlan {
  todo: { migration: Migration; statements: string[] }[];
  /** Versions recorded in the database that this release does not know (a newer release migrated it). */
  unknown: number[];
}

/**
 * What to apply to a database that has `applied` (versions), up to `upTo`. Each dialect runs the plan in one
 * transaction no other migration run can enter, recording each version as it goes (see src/store/dialects/).
 */
export function planMigrations(
  applied: readonly number[],
  migrations: readonly Migration[],
  dialect: Dialect,
  upTo = Infinity,
): MigrationPlan {
  const recorded = new Set(applied);
  const known = new Set(migrations.map((m) => m.version));
  return {
    todo: migrations
      .filter((m) => !recorded.has(m.version) && m.version <= upTo)
      .map((migration) => ({ migration, statements: migration.sql.map((sql) => render(sql, dialect)) })),
    unknown: [...recorded].filter((v) => !known.has(v)).sort((a, b) => a - b),
  };
}
