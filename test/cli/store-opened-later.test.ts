import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/agent.js';
import { PAY_TO_ENV } from '../support/pay-to.js';
import { spawnServe, type SpawnedServer } from '../support/spawn.js';

// Spawns the built CLI (`npm run build` first): the store opens once the server answers.

const dir = mkdtempSync(join(tmpdir(), 'tollbooth-store-later-'));
const servers: SpawnedServer[] = [];
afterAll(async () => {
  for (const s of servers.splice(0)) await s.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A data directory whose database path is taken by a directory: the store cannot be opened there. */
function blockedDataDir(name: string): string {
  const dataDir = join(dir, name);
  mkdirSync(join(dataDir, 'tollbooth.db'), { recursive: true });
  return dataDir;
}

describe('a store opened once the server answers', () => {
  it('is opened after serve listens, and paid routes still answer with their price', async () => {
    const server = await spawnServe({ ...PAY_TO_ENV, DATA_DIR: join(dir, 'ok'), LOG_LEVEL: 'info' });
    servers.push(server);
    await server.logged('store opened');
    const order = server.logs().map((line) => line.msg);
    expect(order.indexOf('tollbooth listening')).toBeGreaterThanOrEqual(0);
    expect(order.indexOf('store opened')).toBeGreaterThan(order.indexOf('tollbooth listening'));
    const probe = await fetch(`${server.url}/api/annuity`, { method: 'POST' });
    expect(probe.status).toBe(402);
  });

  it('stops serve as a failed start when it cannot be opened: non-zero exit, the reason on stderr', async () => {
    const run = await runCli(['serve'], { ...PAY_TO_ENV, DATA_DIR: blockedDataDir('serve'), PORT: '0', MPP: 'off' });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/tollbooth failed to start: .*(database|directory|open)/i);
  });

  it('stops stdio the same way', async () => {
    const run = await runCli(['stdio'], { ...PAY_TO_ENV, DATA_DIR: blockedDataDir('stdio'), MPP: 'off' });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/tollbooth failed to start: .*(database|directory|open)/i);
  });
});
