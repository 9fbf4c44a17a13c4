import { execFile, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { alive, logLines } from '../support/process.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('npm start', () => {
  it('runs the built server, and SIGTERM sent to npm reaches it: it shuts down gracefully and npm exits 0', async () => {
    const dataDir = tempDir('tollbooth-start-');
    // Only what npm and the server need: no settings leak in from the test's own environment.
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
    };
    const npm = spawn('npm', ['start'], { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    const exited = new Promise<number | string>((resolve) =>
      npm.once('exit', (code, signal) => resolve(code ?? signal ?? -1)),
    );
    const listening = await new Promise<Record<string, unknown>>((resolve, reject) => {
      npm.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
        const line = logLines(stderr).find((l) => l.msg === 'tollbooth listening');
        if (line) resolve(line);
      });
      void exited.then((code) =>
        reject(new Error(`npm start exited (${code}) before the server listened:\n${stderr}`)),
      );
    });
    const serverPid = Number(listening.pid);
    cleanups.push(() => {
      if (alive(serverPid)) process.kill(serverPid, 'SIGKILL');
    });

    const probe = await fetch(new URL('/api/annuity', String(listening.url)), { method: 'POST' });
    expect(probe.status).toBe(402);
    expect(probe.headers.get('payment-required')).toBeTruthy();

    expect(npm.pid).not.toBe(serverPid);
    npm.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(alive(serverPid)).toBe(false);
    const logs = logLines(stderr);
    expect(logs.find((l) => l.msg === 'shutting down')).toMatchObject({ signal: 'SIGTERM', pid: serverPid });
    expect(logs.find((l) => l.msg === 'stopped')).toMatchObject({ drained: true, pid: serverPid });
  });

  it('never builds: without dist/ it says how to get a built server and exits 1', async () => {
    const clone = tempDir('tollbooth-start-nodist-');
    mkdirSync(join(clone, 'scripts'));
    copyFileSync(join(root, 'scripts', 'start.mjs'), join(clone, 'scripts', 'start.mjs'));
    const failure = await promisify(execFile)(process.execPath, [join(clone, 'scripts', 'start.mjs'), 'serve']).then(
      () => undefined,
      (err: { code?: number; stderr?: string }) => err,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain('dist/bin/cli.js is missing');
    expect(failure?.stderr).toContain('docs/install.md');
  });
});
