import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Readiness } from '../../src/observe/health.js';
import { CLI_PATH } from '../support/mcp.js';
import { PAY_TO_ENV } from '../support/pay-to.js';
import { logLines } from '../support/process.js';
import { spawnServe, type SpawnedServer } from '../support/spawn.js';

const dirs: string[] = [];
const servers: SpawnedServer[] = [];
afterAll(async () => {
  for (const s of servers.splice(0)) await s.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Runs `tollbooth serve` to its end (a refused start): its exit code and what it wrote to stderr. */
async function refusedStart(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-refused-'));
  dirs.push(dataDir);
  const child = spawn(process.execPath, [CLI_PATH, 'serve'], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  return { code, stderr };
}

const PRODUCTION = { NODE_ENV: 'production', ...PAY_TO_ENV, MPP: 'off' };

describe('a production start that cannot settle', () => {
  it('is refused with exit code 78 when no facilitator or settlement key serves the families it sells', async () => {
    const { code, stderr } = await refusedStart(PRODUCTION);
    expect(code).toBe(78);
    expect(stderr).toMatch(/no facilitator or settlement key can settle payments on evm, svm, stellar, algorand/);
    expect(stderr).not.toMatch(/tollbooth listening/);
  });

  it('is refused when FACILITATOR_URL is misspelled, naming the variable, the closest known name and the family problem', async () => {
    const { code, stderr } = await refusedStart({ ...PRODUCTION, FACILITATOR_ULR: 'https://facilitator.example' });
    expect(code).toBe(78);
    expect(stderr).toMatch(/FACILITATOR_ULR \(did you mean FACILITATOR_URL\?\)/);
    expect(stderr).toMatch(/no facilitator or settlement key can settle payments/);
  });

  it('is refused for a pay-to address with a wrong checksum, naming the variable', async () => {
    const { code, stderr } = await refusedStart({
      ...PRODUCTION,
      FACILITATOR_URL: 'https://facilitator.example',
      // EIP-55's own example 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed with the case of one letter changed.
      PAY_TO_EVM: '0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    });
    expect(code).toBe(78);
    expect(stderr).toMatch(/EIP-55 checksum[\s\S]*PAY_TO_EVM/);
  });
});

describe('a development start that cannot settle', () => {
  it('starts, warns naming the families without a facilitator and each lookalike variable, and /readyz reports them', async () => {
    const server = await spawnServe({ ...PAY_TO_ENV, DATABSE_URL: 'postgres://db.example/x', LOG_LEVEL: 'info' });
    servers.push(server);
    const warnings = logLines(server.stderr())
      .filter((line) => line.level === 'warn')
      .map((line) => String(line.msg));
    expect(warnings).toContainEqual(expect.stringMatching(/^NO FACILITATOR FOR evm, svm, stellar, algorand/));
    expect(warnings).toContainEqual(expect.stringMatching(/DATABSE_URL \(did you mean DATABASE_URL\?\)/));
    const res = await fetch(`${server.url}/readyz`);
    const body = (await res.json()) as Readiness;
    expect(res.status).toBe(200);
    expect(body.cannotSettle).toEqual({
      families: ['evm', 'svm', 'stellar', 'algorand'],
      reason: expect.stringMatching(/no facilitator/),
    });
  });
});
