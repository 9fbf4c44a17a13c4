import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestSchema, describeWithPostgres, type TestSchema } from '../support/postgres.js';
import { startTestServer, type TestServer } from '../support/server.js';

// Three requests per client address, one more per minute: the fourth request of a test is over the limit.
const TIGHT = { RATE_LIMIT_IP_BURST: '3', RATE_LIMIT_IP_PER_MINUTE: '1' };

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function twoInstances(env: Record<string, string>, dataDir?: string): Promise<[TestServer, TestServer]> {
  const options = dataDir ? { dataDir } : {};
  const servers = await Promise.all([startTestServer(env, options), startTestServer(env, options)]);
  cleanups.push(() => Promise.all(servers.map((s) => s.close())).then(() => undefined));
  return servers;
}

/** Sends `count` requests, alternating between the instances, and returns the statuses. */
async function alternate([a, b]: [TestServer, TestServer], count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push((await fetch(`${(i % 2 === 0 ? a : b).url}/healthz`)).status);
  return statuses;
}

function sharedDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tollbooth-limits-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('rate limits across instances', () => {
  it('are per instance by default: each instance keeps its buckets in memory', async () => {
    const instances = await twoInstances(TIGHT, sharedDir());
    expect(await alternate(instances, 6)).toEqual([200, 200, 200, 200, 200, 200]);
  });

  it('are shared through the store with RATE_LIMIT_SHARED=true (two instances on one SQLite file)', async () => {
    const instances = await twoInstances({ ...TIGHT, RATE_LIMIT_SHARED: 'true' }, sharedDir());
    expect(await alternate(instances, 4)).toEqual([200, 200, 200, 429]);
    // The instance that did not refuse yet refuses too: the bucket is one.
    expect((await fetch(`${instances[0].url}/healthz`)).status).toBe(429);
  });
});

describeWithPostgres('rate limits across instances on PostgreSQL', () => {
  it('are shared by default when the instances share DATABASE_URL', async () => {
    const schema: TestSchema = await createTestSchema('tollbooth_limits');
    cleanups.push(() => schema.drop());
    const instances = await twoInstances({ ...TIGHT, DATABASE_URL: schema.url });
    expect(await alternate(instances, 4)).toEqual([200, 200, 200, 429]);
  });
});
