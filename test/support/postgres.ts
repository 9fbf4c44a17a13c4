import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, it } from 'vitest';
import { describeDatabaseUrl } from '../../src/store/dialects/postgres/url.js';

/**
 * The PostgreSQL the tests use: TEST_DATABASE_URL, else the local server's `test` database with
 * password-less (trust) TCP auth. `.ci/run` makes sure one answers and sets TEST_DATABASE_URL when it
 * had to create a role with a password.
 */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

/** Set by `.ci/run` once it saw PostgreSQL answer: then an unreachable server fails the tests instead of skipping them. */
const required = process.env.TOLLBOOTH_TEST_POSTGRES === 'required';

async function probe(): Promise<{ ok: true } | { ok: false; reason: string }> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: String((err as Error).message || (err as { code?: string }).code || err) };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Whether the test PostgreSQL answered when this module loaded, and why not. */
export const postgresAvailability = await probe();

/**
 * `describe` for tests that need PostgreSQL. When it is unreachable the block is replaced by one
 * skipped test whose name says so and why (or a failing one when `.ci/run` required PostgreSQL).
 */
export function describeWithPostgres(name: string, body: () => void): void {
  if (postgresAvailability.ok) {
    describe(name, body);
    return;
  }
  const note = `PostgreSQL at ${describeDatabaseUrl(TEST_DATABASE_URL)} is unreachable (${postgresAvailability.reason}); start it (\`.ci/run\` does) or set TEST_DATABASE_URL`;
  describe(name, () => {
    if (required) {
      it('needs PostgreSQL (TOLLBOOTH_TEST_POSTGRES=required)', () => {
        throw new Error(note);
      });
    } else {
      it.skip(`SKIPPED — ${note}`, () => undefined);
    }
  });
}

/** A DATABASE_URL whose connections use `schema` (via `search_path`). */
export function urlWithSchema(schema: string, base = TEST_DATABASE_URL): string {
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/** A fresh, uniquely named schema in the test database and a DATABASE_URL that uses it; drop it when done. */
export interface TestSchema {
  schema: string;
  url: string;
  drop(): Promise<void>;
}

/** Creates an empty schema named `<prefix>_<random>` for one test or test file. */
export async function createTestSchema(prefix: string): Promise<TestSchema> {
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA "${schema}"`);
  } finally {
    await admin.end();
  }
  return {
    schema,
    url: urlWithSchema(schema),
    drop: async () => {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}
