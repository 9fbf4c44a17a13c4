import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { SqlStore } from '../../sql/store.js';
import { SqliteDb } from './db.js';
import { migrateFile } from './migrations.js';
import { SqlitePort } from './port.js';

/** The embedded store: one SQLite file, safe for several processes on one machine. */
export class SqliteStore extends SqlStore {
  /** Opens (and creates or migrates) the SQLite file at `path`. */
  static async open(path: string): Promise<SqliteStore> {
    mkdirSync(dirname(path), { recursive: true });
    const db = SqliteDb.open(path);
    try {
      migrateFile(db);
    } catch (err) {
      await db.close().catch(() => undefined);
      throw err;
    }
    return new SqliteStore(new SqlitePort(db));
  }
}
