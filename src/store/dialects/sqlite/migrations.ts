import { planMigrations, type MigrationReport } from '../../sql/migrate.js';
import { MIGRATIONS } from '../../sql/schema.js';
import type { SqliteDb } from './db.js';
import { copyLegacy, isLegacy, setLegacyAside } from './legacy.js';

/** The last version a file written before the shared migrations corresponds to once adopted. */
const LEGACY_VERSION = 6;

/** Applies the planned migrations up to `upTo`, recording each version in `PRAGMA user_version`. */
function apply(db: SqliteDb, upTo = Infinity): MigrationReport {
  const version = Number(db.execute('PRAGMA user_version').rows[0]?.user_version ?? 0);
  const applied = Array.from({ length: version }, (_, i) => i + 1);
  const plan = planMigrations(applied, MIGRATIONS, 'sqlite', upTo);
  for (const { migration, statements } of plan.todo) {
    for (const sql of statements) db.exec(sql);
    db.exec(`PRAGMA user_version = ${Math.trunc(migration.version)}`);
  }
  return { applied: plan.todo.map((t) => t.migration.version), unknown: plan.unknown };
}

/**
 * Applies the missing migrations in one write transaction (`BEGIN IMMEDIATE`: processes opening the file together
 * take turns), synchronously: nothing else of this process may wait for the lock meanwhile. A file written before the
 * shared migrations is adopted first (see ./legacy.ts).
 */
export function migrateFile(db: SqliteDb): MigrationReport {
  db.exec('BEGIN IMMEDIATE');
  try {
    const adopted: number[] = [];
    if (isLegacy(db)) {
      setLegacyAside(db);
      adopted.push(...apply(db, LEGACY_VERSION).applied);
      copyLegacy(db);
    }
    const report = apply(db);
    db.exec('COMMIT');
    return { ...report, applied: [...adopted, ...report.applied] };
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
}
