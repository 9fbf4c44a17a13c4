import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import type { Logger } from '../../src/shared/log.js';
import { openStore, storeLocation } from '../../src/store/open.js';
import { PostgresStore } from '../../src/store/dialects/postgres/store.js';
import { availableDrivers } from '../../src/store/dialects/sqlite/driver.js';
import { SqliteStore } from '../../src/store/dialects/sqlite/store.js';
import { createTestSchema, describeWithPostgres } from '../support/postgres.js';

const dir = mkdtempSync(join(tmpdir(), 'tollbooth-open-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A logger that keeps every line, to check what reaches the logs. */
function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const keep = (msg: string, fields?: Record<string, unknown>) => void lines.push(JSON.stringify({ msg, ...fields }));
  return { lines, info: keep, warn: keep, error: keep };
}

describe('choosing the store', () => {
  it('opens the embedded SQLite file under DATA_DIR when DATABASE_URL is not set', async () => {
    const config = loadConfig({ DATA_DIR: dir });
    expect(config.databaseUrl).toBeUndefined();
    expect(storeLocation(config)).toEqual({ kind: 'sqlite', where: join(dir, 'tollbooth.db') });
    const store = await openStore(config, recordingLogger());
    expect(store).toBeInstanceOf(SqliteStore);
    await store.close();
  });

  it('opens the SQLite file with the driver SQLITE_DRIVER names, and names it in the start line', async () => {
    const preferred = availableDrivers()[0];
    for (const driver of availableDrivers()) {
      const log = recordingLogger();
      const store = await openStore(loadConfig({ DATA_DIR: join(dir, driver), SQLITE_DRIVER: driver }), log);
      expect((store as SqliteStore).driver).toBe(driver);
      expect(log.lines.join('\n')).toContain(`"driver":"${driver}"`);
      await store.close();
    }
    const unset = await openStore(loadConfig({ DATA_DIR: join(dir, 'preferred') }), recordingLogger());
    expect((unset as SqliteStore).driver).toBe(preferred);
    await unset.close();
  });

  it('refuses an SQLITE_DRIVER it does not know, or one this Node does not have, naming the variable', () => {
    expect(() => loadConfig({ SQLITE_DRIVER: 'sqlite3' })).toThrow(/must be node:sqlite or libsql[\s\S]*SQLITE_DRIVER/);
    expect(() => loadConfig({ SQLITE_DRIVER: 'libsql' })).not.toThrow();
    if (availableDrivers().includes('node:sqlite')) return;
    // Node 20 (and 22 before 22.16): asking for Node's own SQLite is a configuration problem, not a failed start.
    expect(() => loadConfig({ SQLITE_DRIVER: 'node:sqlite' })).toThrow(
      /node:sqlite needs Node 22\.16 or later[\s\S]*SQLITE_DRIVER/,
    );
  });

  it('refuses to open the file with a driver this Node does not have, naming the setting', async () => {
    if (availableDrivers().includes('node:sqlite')) return;
    const config = { dataDir: join(dir, 'missing-driver'), sqliteDriver: 'node:sqlite' as const };
    await expect(openStore(config, recordingLogger())).rejects.toThrow(/SQLITE_DRIVER=node:sqlite is not available/);
  });

  it('reads DATABASE_URL from DATABASE_URL_FILE, and names it without the password', () => {
    const file = join(dir, 'database-url');
    writeFileSync(file, 'postgres://tollbooth:pa55-w0rd@db.internal:6543/payments\n');
    const config = loadConfig({ DATA_DIR: dir, DATABASE_URL_FILE: file });
    expect(config.databaseUrl).toBe('postgres://tollbooth:pa55-w0rd@db.internal:6543/payments');
    expect(storeLocation(config)).toEqual({
      kind: 'postgres',
      where: 'postgres://tollbooth@db.internal:6543/payments',
    });
  });

  it('refuses a DATABASE_URL that is not a postgres:// URL, without repeating it', () => {
    let error: unknown;
    try {
      loadConfig({ DATABASE_URL: 'mysql://root:hunter2-secret@db/x' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('DATABASE_URL');
    expect((error as Error).message).toContain('must be a postgres:// or postgresql:// connection URL');
    expect((error as Error).message).not.toContain('hunter2-secret');
  });

  it('stops start-up with a clear error when PostgreSQL cannot be reached, never logging the password', async () => {
    const log = recordingLogger();
    const config = loadConfig({
      DATA_DIR: dir,
      DATABASE_URL: 'postgresql://tollbooth:hunter2-secret@127.0.0.1:1/payments',
    });
    await expect(openStore(config, log)).rejects.toThrow(
      /Could not open the PostgreSQL store at postgres:\/\/tollbooth@127\.0\.0\.1:1\/payments/,
    );
    await expect(openStore(config, log)).rejects.not.toThrow(/hunter2-secret/);
    expect(log.lines.join('\n')).not.toContain('hunter2-secret');
  });
});

describeWithPostgres('choosing the store with a reachable PostgreSQL', () => {
  it('opens PostgreSQL when DATABASE_URL is set, and logs where without the password', async () => {
    const schema = await createTestSchema('tollbooth_open');
    try {
      const url = new URL(schema.url);
      url.password = 'not-needed-with-trust-auth';
      const log = recordingLogger();
      const store = await openStore(loadConfig({ DATA_DIR: dir, DATABASE_URL: url.toString() }), log);
      expect(store).toBeInstanceOf(PostgresStore);
      await store.ping();
      await store.close();
      expect(log.lines.join('\n')).toContain('"store":"postgres"');
      expect(log.lines.join('\n')).not.toContain('not-needed-with-trust-auth');
    } finally {
      await schema.drop();
    }
  });
});
