import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'libsql';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { Readiness } from '../../src/observe/health.js';
import { SqliteStore } from '../../src/store/dialects/sqlite/store.js';
import { CLI_PATH } from '../support/mcp.js';
import { logLines } from '../support/process.js';
import { createTestSchema, describeWithPostgres, TEST_DATABASE_URL, type TestSchema } from '../support/postgres.js';
import { startTestServer, type TestServer } from '../support/server.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function readyz(url: string): Promise<{ status: number; body: Readiness }> {
  const res = await fetch(`${url}/readyz`);
  return { status: res.status, body: (await res.json()) as Readiness };
}

/** A migrated SQLite store file with everything checkpointed into it (no WAL left): its directory and size. */
async function preparedDataDir(): Promise<{ dataDir: string; size: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-full-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const file = join(dataDir, 'tollbooth.db');
  await (await SqliteStore.open(file)).close();
  const db = new Database(file);
  db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').all();
  db.close();
  return { dataDir, size: statSync(file).size };
}

/** `tollbooth serve` under `ulimit -f` (no file of the process may grow past `maxKiB`): its URL once it listens. */
async function serveWithFileLimit(dataDir: string, maxKiB: number): Promise<string> {
  const child: ChildProcess = spawn(
    'bash',
    ['-c', `ulimit -f ${maxKiB} && exec "$@"`, 'bash', process.execPath, CLI_PATH, 'serve'],
    {
      env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  let stderr = '';
  return new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      const listening = logLines(stderr).find((line) => line.msg === 'tollbooth listening');
      if (listening) resolve(String(listening.url));
    });
    void exited.then((code) => reject(new Error(`tollbooth exited (${String(code)}) before listening:\n${stderr}`)));
  });
}

describe('GET /readyz with a SQLite file that cannot grow', () => {
  it('is 200 while writes succeed, then 503 with the store error once the file can no longer grow', async () => {
    const { dataDir, size } = await preparedDataDir();
    // The database file may keep its size; its write-ahead log gets room for a few commits only.
    const url = await serveWithFileLimit(dataDir, Math.ceil(size / 1024) + 12);
    const first = await readyz(url);
    expect(first.status).toBe(200);
    expect(first.body.checks.store).toMatchObject({ ok: true, probe: 'write' });
    let answer = first;
    // Every probe writes, so the log grows until the limit refuses a write (a read would go on succeeding).
    for (let i = 0; i < 200 && answer.status === 200; i += 1) answer = await readyz(url);
    expect(answer.status).toBe(503);
    expect(answer.body.status).toBe('not_ready');
    expect(answer.body.checks.store).toMatchObject({ ok: false, error: expect.any(String) });
    expect(answer.body.checks.store!.error).not.toBe('');
  });
});

/** A role of its own for one server, so its connections can be made read-only without touching anyone else's. */
async function readOnlyCapableRole(schema: TestSchema): Promise<{ role: string; url: string; admin: pg.Client }> {
  const role = `tollbooth_ro_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE ROLE "${role}" LOGIN`);
  await admin.query(`GRANT ALL ON SCHEMA "${schema.schema}" TO "${role}"`);
  cleanups.push(async () => {
    await admin.query(`DROP OWNED BY "${role}" CASCADE`).catch(() => undefined);
    await admin.query(`DROP ROLE IF EXISTS "${role}"`).catch(() => undefined);
    await admin.end();
  });
  const url = new URL(schema.url);
  url.username = role;
  url.password = '';
  return { role, url: url.toString(), admin };
}

describeWithPostgres('GET /readyz with a read-only PostgreSQL', () => {
  it('is 503 naming the refused write while reads still answer', async () => {
    const schema = await createTestSchema('tollbooth_readyz');
    cleanups.push(() => schema.drop());
    const { role, url, admin } = await readOnlyCapableRole(schema);
    const server: TestServer = await startTestServer({ DATABASE_URL: url });
    cleanups.push(() => server.close());
    expect((await readyz(server.url)).status).toBe(200);

    // From now on the role's sessions are read-only (as on a standby or after a failover): end the open ones.
    await admin.query(`ALTER ROLE "${role}" SET default_transaction_read_only = on`);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [role]);

    let answer = await readyz(server.url);
    // The first probes may meet a connection the server just lost; the next ones meet a read-only session.
    for (let i = 0; i < 20 && !/read-only/.test(answer.body.checks.store?.error ?? ''); i += 1)
      answer = await readyz(server.url);
    expect(answer.status).toBe(503);
    expect(answer.body.checks.store).toMatchObject({ ok: false, error: expect.stringMatching(/read-only/) });
    await expect(server.runtime.store.ping()).resolves.toBeUndefined();
  });
});
