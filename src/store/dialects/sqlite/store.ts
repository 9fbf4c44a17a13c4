import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { SqlStore } from '../../sql/store.js';
import { SqliteDb } from './db.js';
import type { SqliteDriver } from './driver.js';
import { migrateFile } from './migrations.js';
import { SqlitePort } from './port.js';

/** The embedded store: one SQLite file, safe for several processes on one machine. */
export class SqliteStore extends SqlStore {
  private constructor(
    port: SqlitePort,
    /** The driver the file is open with (./driver.ts). */
    readonly driver: SqliteDriver,
  ) {
    super(port);
  }

  /** Opens (and creates or migrates) the SQLite file at `path`, with the preferred driver here unless one is named. */
  static async open(path: string, driver?: SqliteDriver): Promise<SqliteStore> {
    mkdirSync(dirname(path), { recursive: true });
    const db = SqliteDb.open(path, driver);
    try {
      migrateFile(db);
    } catch (err) {
      await db.close().catch(() => undefined);
      throw err;
    }
    return new SqliteStore(new SqlitePort(db), db.driver);
  }
}
