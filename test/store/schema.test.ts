import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/dialects/postgres/store.js';
import { SqliteStore } from '../../src/store/dialects/sqlite/store.js';
import { createTestSchema, describeWithPostgres, type TestSchema } from '../support/postgres.js';
import { postgresShape, sqliteShape, type SchemaShape } from './catalog.js';
import { createLegacyPostgres } from './legacy/postgres.js';
import { createLegacySqlite } from './legacy/sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'tollbooth-schema-'));
const schemas: TestSchema[] = [];
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await Promise.all(schemas.map((s) => s.drop()));
});

const TABLES = [
  'agent_channels',
  'agent_pay_to_pins',
  'agent_spends',
  'batch_channels',
  'drips',
  'idempotency_records',
  'orders',
  'payment_claims',
  'rate_buckets',
  'receipts',
];

async function sqliteAfterOpen(name: string, legacy = false): Promise<SchemaShape> {
  const file = join(dir, `${name}.db`);
  if (legacy) createLegacySqlite(file);
  await (await SqliteStore.open(file)).close();
  return sqliteShape(file);
}

async function postgresAfterOpen(legacy = false): Promise<SchemaShape> {
  const schema = await createTestSchema('tollbooth_shape');
  schemas.push(schema);
  if (legacy) await createLegacyPostgres(schema.url);
  await (await PostgresStore.open(schema.url)).close();
  return postgresShape(schema.url);
}

describe('the SQLite schema', () => {
  it('is the same for a new file and for one written before the shared migrations', async () => {
    const fresh = await sqliteAfterOpen('fresh');
    expect(Object.keys(fresh.tables).sort()).toEqual(TABLES);
    expect(await sqliteAfterOpen('legacy', true)).toEqual(fresh);
  });
});

describeWithPostgres('one schema for SQLite and PostgreSQL', () => {
  it('ends at the same tables, columns (type and nullability), primary keys, CHECK constraints and indexes in both', async () => {
    const [sqlite, postgres] = await Promise.all([sqliteAfterOpen('compare'), postgresAfterOpen()]);
    expect(Object.keys(postgres.tables).sort()).toEqual(TABLES);
    expect(postgres.tables.payment_claims?.checks).toEqual([
      'payment_claims_protocol_check',
      'payment_claims_status_check',
      'payment_claims_transport_check',
    ]);
    expect(postgres.indexes.payment_claims_pending).toEqual({
      table: 'payment_claims',
      unique: false,
      partial: true,
      columns: ['created_at'],
    });
    expect(sqlite).toEqual(postgres);
  });

  it('brings a PostgreSQL schema migrated by the release before to the same schema as a new one', async () => {
    const [fresh, legacy] = await Promise.all([postgresAfterOpen(), postgresAfterOpen(true)]);
    expect(legacy).toEqual(fresh);
  });
});
