/** Where the server keeps its payments (DATA_DIR, DATABASE_URL) and which driver opens the SQLite file (SQLITE_DRIVER). */
import { resolve } from 'node:path';
import type { Env } from './env.js';

/** The store part of the configuration. */
export interface StoreConfigPart {
  dataDir: string;
  /** PostgreSQL connection URL shared by several instances (DATABASE_URL); unset, the SQLite file under dataDir is used. Never log it. */
  databaseUrl?: string;
  /** The SQLite driver asked for (SQLITE_DRIVER); unset, the store picks node:sqlite where this Node has it, else libsql. */
  sqliteDriver?: 'node:sqlite' | 'libsql';
}

/** The store settings of a validated environment. */
export function storeSettings(env: Env): StoreConfigPart {
  return {
    dataDir: resolve(env.DATA_DIR ?? 'data'),
    ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : {}),
    ...(env.SQLITE_DRIVER ? { sqliteDriver: env.SQLITE_DRIVER } : {}),
  };
}
