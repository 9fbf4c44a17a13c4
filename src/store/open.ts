import { join } from 'node:path';
import type { Config } from '../config/config.js';
import type { Logger } from '../shared/log.js';
import { describeDatabaseUrl } from './dialects/postgres/url.js';
import { driverUnavailable } from './dialects/sqlite/driver.js';
import type { Store } from './store.js';

/** Where a configuration keeps its payments: PostgreSQL (named without password) or the SQLite file. */
export function storeLocation(config: Pick<Config, 'databaseUrl' | 'dataDir'>): {
  kind: 'postgres' | 'sqlite';
  where: string;
} {
  return config.databaseUrl
    ? { kind: 'postgres', where: describeDatabaseUrl(config.databaseUrl) }
    : { kind: 'sqlite', where: join(config.dataDir, 'tollbooth.db') };
}

/**
 * Opens the configured store: PostgreSQL when DATABASE_URL is set (several instances), else the embedded SQLite file
 * under DATA_DIR, with the driver SQLITE_DRIVER names (refused, naming it, where this Node lacks that driver).
 */
export async function openStore(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'sqliteDriver'>,
  log: Logger,
): Promise<Store> {
  const location = storeLocation(config);
  // Each store's driver loads only when it is the one configured (pg is not loaded on SQLite, nor SQLite on PostgreSQL).
  if (config.databaseUrl) {
    const store = await (await import('./dialects/postgres/store.js')).PostgresStore.open(config.databaseUrl, { log });
    log.info('store opened', { store: location.kind, at: location.where });
    return store;
  }
  const asked = config.sqliteDriver;
  const problem = asked && driverUnavailable(asked);
  if (problem) throw new Error(`SQLITE_DRIVER=${asked} is not available: ${problem}; unset it or set it to libsql.`);
  const { SqliteStore } = await import('./dialects/sqlite/store.js');
  const store = await SqliteStore.open(location.where, asked);
  log.info('store opened', { store: location.kind, driver: store.driver, at: location.where });
  return store;
}
