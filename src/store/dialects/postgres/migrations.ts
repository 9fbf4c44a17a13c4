import type { Pool, PoolClient } from 'pg';
import { planMigrations, type Migration, type MigrationReport } from '../../sql/migrate.js';
import { MIGRATIONS } from '../../sql/schema.js';

/**
 * Creates `schema_migrations` and applies the missing migrations of the shared list in one transaction, under a
 * transaction-scoped advisory lock keyed on the current schema, so instances starting together take turns and each
 * migration runs exactly once.
 */
export async function migrate(pool: Pool, migrations: readonly Migration[] = MIGRATIONS): Promise<MigrationReport> {
  const client: PoolClient = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    await client.query(
      "SELECT pg_advisory_xact_lock(hashtext('tollbooth.schema_migrations'), hashtext(coalesce(current_schema(), '')))",
    );
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
    const done = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const plan = planMigrations(
      done.rows.map((r) => Number(r.version)),
      migrations,
      'postgres',
    );
    for (const { migration, statements } of plan.todo) {
      for (const sql of statements) await client.query(sql);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
    }
    await client.query('COMMIT');
    return { applied: plan.todo.map((t) => t.migration.version), unknown: plan.unknown };
  } catch (err) {
    await client.query('ROLLBACK').catch((e: Error) => (broken = e));
    throw err;
  } finally {
    client.release(broken);
  }
}
