import pg from 'pg';
import type { Logger } from '../../../shared/log.js';
import { SqlStore } from '../../sql/store.js';
import { migrate } from './migrations.js';
import { JSON_AS_TEXT, PostgresPort } from './port.js';
import { describeDatabaseUrl, errorText, redactor } from './url.js';

/** Options for opening the PostgreSQL store. */
export interface PostgresStoreOptions {
  log?: Logger;
  /** Most connections this instance keeps open (default 10). */
  maxConnections?: number;
  /** How long to wait for a connection before failing a call (default 10 s). */
  connectTimeoutMs?: number;
  /** Told of every round trip to the server (tests and benches count them per paid call). */
  onRoundTrip?: () => void;
}

/** The shared store for several instances: PostgreSQL, every state change atomic in the database. */
export class PostgresStore extends SqlStore {
  /** Connects to `url` (a DATABASE_URL) and applies missing migrations; throws with a clear, password-free message. */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const name = describeDatabaseUrl(url);
    const redact = redactor(url);
    const pool = new pg.Pool({
      connectionString: url,
      max: options.maxConnections ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
      keepAlive: true,
      application_name: 'tollbooth',
      types: JSON_AS_TEXT,
    });
    // An idle connection that drops (server restart, failover) must not crash the process.
    pool.on('error', (err) =>
      options.log?.warn('an idle PostgreSQL connection failed', { database: name, error: redact(errorText(err)) }),
    );
    try {
      const report = await migrate(pool);
      if (report.applied.length > 0)
        options.log?.info('PostgreSQL store migrated', { database: name, applied: report.applied });
      if (report.unknown.length > 0) {
        options.log?.warn(
          'the PostgreSQL schema has migrations this release does not know (a newer release ran here)',
          { database: name, versions: report.unknown },
        );
      }
    } catch (err) {
      await pool.end().catch(() => undefined);
      // No `cause`: the driver's error may carry the URL and its password; the message keeps its redacted text.
      // eslint-disable-next-line preserve-caught-error
      throw new Error(
        `Could not open the PostgreSQL store at ${name}: ${redact(errorText(err))}. Check DATABASE_URL and that the server is reachable.`,
      );
    }
    const onRoundTrip = options.onRoundTrip ?? (() => undefined);
    return new PostgresStore(new PostgresPort(pool, { name, redact, onRoundTrip }));
  }
}
