import { createServer, connect, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../../../src/store/dialects/postgres/migrations.js';
import { MIGRATIONS } from '../../../../src/store/sql/schema.js';
import { PostgresStore } from '../../../../src/store/dialects/postgres/store.js';
import type { PaymentClaim, ReceiptRecord } from '../../../../src/store/store.js';
import {
  createTestSchema,
  describeWithPostgres,
  TEST_DATABASE_URL,
  type TestSchema,
} from '../../../support/postgres.js';
import { describeStoreContract } from '../../contract.js';

const claim = (key: string): PaymentClaim => ({
  replayKey: key,
  tool: 'annuity',
  network: 'eip155:8453',
  payer: '0xabc',
  amount: '1000',
  transport: 'http',
});
const receipt = (key: string): ReceiptRecord => ({
  replayKey: key,
  tool: 'annuity',
  network: 'eip155:8453',
  payer: '0xabc',
  amount: '1000',
  transaction: '0xtx',
  status: 'settled',
  transport: 'mcp',
  createdAt: new Date().toISOString(),
});

describe('the PostgreSQL store without a server', () => {
  it('fails to open with a message naming the database but never its password', async () => {
    const url = 'postgres://tollbooth:s3cret-Pa55word@127.0.0.1:1/payments';
    const error = await PostgresStore.open(url, { connectTimeoutMs: 2_000 }).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(error?.message).toMatch(
      /^Could not open the PostgreSQL store at postgres:\/\/tollbooth@127\.0\.0\.1:1\/payments: .+Check DATABASE_URL/,
    );
    expect(error?.message).not.toContain('s3cret-Pa55word');
  });
});

// Every test gets its own schema, so tests and test files never see each other's rows.
const schemas: TestSchema[] = [];
async function freshSchema(): Promise<TestSchema> {
  const schema = await createTestSchema('tollbooth_store');
  schemas.push(schema);
  return schema;
}
const dropSchemas = async () => {
  await Promise.all(schemas.splice(0).map((s) => s.drop()));
};

describeWithPostgres('the PostgreSQL store', () => {
  describeStoreContract('PostgreSQL', async () => PostgresStore.open((await freshSchema()).url), dropSchemas);

  describe('with several instances on one database', () => {
    let schema: TestSchema;
    beforeAll(async () => {
      schema = await createTestSchema('tollbooth_instances');
    });
    afterAll(async () => {
      await schema.drop();
    });

    it('creates its schema once when four instances start at the same moment', async () => {
      const pools = Array.from({ length: 4 }, () => new pg.Pool({ connectionString: schema.url, max: 1 }));
      try {
        const reports = await Promise.all(pools.map((pool) => migrate(pool)));
        const appliers = reports.filter((r) => r.applied.length > 0);
        expect(appliers).toHaveLength(1);
        expect(appliers[0]?.applied).toEqual(MIGRATIONS.map((m) => m.version));
        const again = await migrate(pools[0]!);
        expect(again).toEqual({ applied: [], unknown: [] });
        const rows = await pools[0]!.query('SELECT version FROM schema_migrations ORDER BY version');
        expect(rows.rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
      } finally {
        await Promise.all(pools.map((p) => p.end()));
      }
    });

    it('opens two stores on one schema at once, and gives a payment to exactly one of them', async () => {
      const [a, b] = await Promise.all([PostgresStore.open(schema.url), PostgresStore.open(schema.url)]);
      try {
        const results = await Promise.all(
          Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).ledger.claimPayment(claim('shared'))),
        );
        expect(results.filter((r) => r.type === 'claimed')).toHaveLength(1);
        expect(results.filter((r) => r.type === 'in_flight')).toHaveLength(39);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('gives one idempotency id to exactly one of two instances racing for it', async () => {
      const [a, b] = await Promise.all([PostgresStore.open(schema.url), PostgresStore.open(schema.url)]);
      try {
        const id = `race_${Date.now()}_0123456789`;
        const begin = {
          id,
          tool: 'annuity',
          requestHash: 'h',
          replayKey: 'p',
          expiresAt: new Date(Date.now() + 60_000).toISOString(),
        };
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).ledger.claimIdempotency(begin)),
        );
        expect(results.filter((r) => r.type === 'new')).toHaveLength(1);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('lets one instance see the spent payment and pending settlement another one recorded', async () => {
      const a = await PostgresStore.open(schema.url);
      await a.ledger.claimPayment(claim('handover'));
      await a.ledger.completePayment(receipt('handover'));
      await a.ledger.claimPayment(claim('pending-handover'));
      await a.ledger.markPaymentPending('pending-handover', {
        transaction: '0xp',
        payload: {},
        requirements: {},
        requestHash: 'h',
        output: null,
      });
      await a.close();
      const b = await PostgresStore.open(schema.url);
      try {
        expect(await b.ledger.claimPayment(claim('handover'))).toEqual({ type: 'spent', transaction: '0xtx' });
        expect((await b.ledger.listPending()).map((p) => p.replayKey)).toContain('pending-handover');
      } finally {
        await b.close();
      }
    });
  });

  describe('details', () => {
    let store: PostgresStore;
    beforeAll(async () => {
      store = await PostgresStore.open((await freshSchema()).url);
    });
    afterAll(async () => {
      await store.close();
      await dropSchemas();
    });

    it('records a settled payment it never saw claimed as spent, so it can never be sold again', async () => {
      await store.ledger.completePayment(receipt('unclaimed'));
      expect(await store.ledger.claimPayment(claim('unclaimed'))).toEqual({ type: 'spent', transaction: '0xtx' });
      expect((await store.ledger.listReceipts()).filter((r) => r.replayKey === 'unclaimed')).toHaveLength(1);
    });

    it('keeps a pending output exactly as given, key order included', async () => {
      const output = { z: 1, a: [3, 2, 1], m: { y: 'x', b: null } };
      await store.ledger.claimPayment(claim('ordered'));
      await store.ledger.markPaymentPending('ordered', {
        transaction: '',
        payload: { b: 1, a: 2 },
        requirements: {},
        requestHash: 'h',
        output,
      });
      const pending = (await store.ledger.listPending()).find((p) => p.replayKey === 'ordered');
      expect(JSON.stringify(pending?.output)).toBe(JSON.stringify(output));
      expect(JSON.stringify(pending?.payload)).toBe('{"b":1,"a":2}');
    });

    it('fails calls as "PostgreSQL store unavailable" while the server is gone, and recovers when it is back', async () => {
      const proxy = await startProxy(new URL(TEST_DATABASE_URL));
      const url = new URL((await freshSchema()).url);
      url.host = `127.0.0.1:${proxy.port}`;
      url.password = 'never-shown';
      const viaProxy = await PostgresStore.open(url.toString(), { connectTimeoutMs: 2_000 });
      try {
        await viaProxy.ping();
        await proxy.stop();
        const error = await viaProxy.ledger.claimPayment(claim('during-outage')).then(
          () => undefined,
          (err: Error) => err,
        );
        expect(error?.message).toMatch(
          new RegExp(`^PostgreSQL store unavailable \\(postgres://postgres@127\\.0\\.0\\.1:${proxy.port}/test\\): `),
        );
        expect(error?.message).not.toContain('never-shown');
        await proxy.start();
        expect(await viaProxy.ledger.claimPayment(claim('after-outage'))).toEqual({ type: 'claimed' });
      } finally {
        await viaProxy.close();
        await proxy.stop();
      }
    });

    it('refuses to open on a schema that does not exist, saying so', async () => {
      const missing = (await freshSchema()).url.replace(
        /search_path%3D[a-z0-9_]+/,
        'search_path%3Dno_such_schema_here',
      );
      await expect(PostgresStore.open(missing)).rejects.toThrow(
        /Could not open the PostgreSQL store at .*: no schema has been selected to create in/,
      );
    });
  });
});

/** A TCP relay to the test PostgreSQL on a port of its own, that a test can take down (cutting every connection) and bring back. */
async function startProxy(target: URL): Promise<{ port: number; stop(): Promise<void>; start(): Promise<void> }> {
  let server: Server | undefined;
  const sockets = new Set<Socket>();
  let port = 0;
  const start = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((client) => {
        const upstream = connect(Number(target.port || 5432), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as { port: number }).port;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      if (!server?.listening) return resolve();
      server.close(() => resolve());
    });
  await start();
  return { port, stop, start };
}

describeWithPostgres('round trips of a paid call to PostgreSQL', () => {
  it('claims in one, records the receipt in one, asks both rate-limit buckets in one, and waits for none before settling', async () => {
    let trips = 0;
    const store = await PostgresStore.open((await freshSchema()).url, { onRoundTrip: () => trips++ });
    try {
      const count = async (step: () => Promise<unknown>) => {
        const before = trips;
        await step();
        return trips - before;
      };
      const now = Date.now();
      const bucket = (key: string) => ({ key, capacity: 10, refillPerSecond: 1, cost: 1, now });
      expect(await count(() => store.ledger.claimPayment(claim('rt1')))).toBe(1);
      expect(
        await count(() => store.buckets.claimTokensFromEach([bucket('payer:0xabc'), bucket('tool:annuity')])),
      ).toBe(1);
      expect(await count(() => store.durable())).toBe(0);
      expect(await count(() => store.ledger.completePayment(receipt('rt1')))).toBe(1);
      expect((await store.ledger.listReceipts()).filter((r) => r.replayKey === 'rt1')).toHaveLength(1);
      // A payment completed again (a second reconciler) keeps its one receipt.
      await store.ledger.completePayment(receipt('rt1'));
      expect((await store.ledger.listReceipts()).filter((r) => r.replayKey === 'rt1')).toHaveLength(1);
      expect(await count(() => store.ledger.claimPayment(claim('rt2')))).toBe(1);
      expect(await count(() => store.ledger.releasePayment('rt2'))).toBe(1);
    } finally {
      await store.close();
      await dropSchemas();
    }
  });
});
