import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'libsql';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/dialects/postgres/store.js';
import { SqliteStore } from '../../src/store/dialects/sqlite/store.js';
import { MIGRATIONS } from '../../src/store/sql/schema.js';
import { createTestSchema, describeWithPostgres, type TestSchema } from '../support/postgres.js';
import { createLegacyPostgres } from './legacy/postgres.js';
import { expectLegacyRowsReadBack, expectNewRowsBesideLegacy } from './legacy/read-back.js';
import { createLegacySqlite } from './legacy/sqlite.js';

const versions = MIGRATIONS.map((m) => m.version);
const dir = mkdtempSync(join(tmpdir(), 'tollbooth-forward-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a SQLite file written before the shared migrations', () => {
  it('opens with every claim, pending settlement, receipt, idempotency record, drip, order, spend and bucket intact', async () => {
    const file = join(dir, 'legacy.db');
    createLegacySqlite(file);
    const store = await SqliteStore.open(file);
    try {
      await expectLegacyRowsReadBack(store);
      await expectNewRowsBesideLegacy(store);
    } finally {
      await store.close();
    }
    const raw = new Database(file, { readonly: true });
    const version = (raw.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
    const tables = raw.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'legacy_%'").all();
    raw.close();
    expect(version).toBe(versions.at(-1));
    expect(tables).toEqual([]);
    const reopened = await SqliteStore.open(file);
    expect((await reopened.ledger.listReceipts()).map((r) => r.replayKey)).toEqual([
      'failed-1',
      'spent-after-pending',
      'spent-1',
    ]);
    await reopened.close();
  });
});

describeWithPostgres('a PostgreSQL schema migrated by the release before the shared migrations', () => {
  let schema: TestSchema;
  afterAll(async () => {
    await schema?.drop();
  });

  it('opens with every claim, pending settlement, receipt, idempotency record, drip, order, spend and bucket intact', async () => {
    schema = await createTestSchema('tollbooth_forward');
    await createLegacyPostgres(schema.url);
    const store = await PostgresStore.open(schema.url);
    try {
      await expectLegacyRowsReadBack(store);
      await expectNewRowsBesideLegacy(store);
    } finally {
      await store.close();
    }
    const client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    const recorded = await client.query('SELECT version FROM schema_migrations ORDER BY version');
    await client.end();
    expect(recorded.rows.map((r) => r.version)).toEqual(versions);
  });
});
