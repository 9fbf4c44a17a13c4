import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'vitest';
import { freePort } from './nginx.js';

/** The distribution's caddy (Debian's `caddy` package); CADDY_BIN points elsewhere. */
export const CADDY_BIN = process.env.CADDY_BIN || '/usr/bin/caddy';

/** Set by `.ci/run` once it installed caddy: then a missing caddy fails the tests instead of skipping them. */
const required = process.env.TOLLBOOTH_TEST_CADDY === 'required';

/**
 * `describe` for tests that run caddy. Without it the block is one skipped test whose name says so (or a failing one
 * when `.ci/run` required caddy).
 */
export function describeWithCaddy(name: string, body: () => void): void {
  if (existsSync(CADDY_BIN)) return void describe(name, body);
  const note = `caddy is not installed at ${CADDY_BIN} (apt-get install caddy, as \`.ci/run\` does, or set CADDY_BIN)`;
  describe(name, () => {
    if (required) {
      it('needs caddy (TOLLBOOTH_TEST_CADDY=required)', () => {
        throw new Error(note);
      });
    } else {
      it.skip(`SKIPPED — ${note}`, () => undefined);
    }
  });
}

/**
 * Global options of the test only, put before the shipped file: no admin endpoint, no certificates, every listener
 * on 127.0.0.1, and a bounded shutdown (the default waits for every open connection).
 */
const TEST_OPTIONS = `{
\tadmin off
\tauto_https off
\tdefault_bind 127.0.0.1
\tgrace_period 2s
}

`;

/**
 * The shipped Caddyfile made runnable here: the site address `pay.example.com` becomes `site` and every
 * `reverse_proxy` line's upstream addresses become `upstreams` (host:port); nothing else changes. Throws when the file
 * no longer has what it replaces.
 */
export function caddyfileFor(template: string, upstreams: readonly string[], site: string): string {
  const address = /^pay\.example\.com \{$/m;
  if (!address.test(template)) throw new Error('the Caddyfile has no `pay.example.com {` site block');
  const proxies = /^([ \t]*)reverse_proxy 127\.0\.0\.1:\d+(?: 127\.0\.0\.1:\d+)* \{$/gm;
  if (!proxies.test(template)) throw new Error('the Caddyfile has no `reverse_proxy 127.0.0.1:…` lines');
  return (
    TEST_OPTIONS +
    template
      .replace(address, `${site} {`)
      .replace(proxies, (_all, indent: string) => `${indent}reverse_proxy ${upstreams.join(' ')} {`)
  );
}

/** A caddy process on a free port of 127.0.0.1 with its own config file and HOME/XDG directories in a temp dir. */
export interface RunningCaddy {
  url: string;
  /** The Caddyfile it loaded (the template after caddyfileFor). */
  config: string;
  /** Its log so far (caddy logs to stderr). */
  errors(): string;
  stop(): Promise<void>;
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Starts `caddy run` with the Caddyfile in front of `upstreams`; resolves once its port accepts connections. */
export async function startCaddy(template: string, upstreams: readonly string[]): Promise<RunningCaddy> {
  const dir = mkdtempSync(join(tmpdir(), 'tollbooth-caddy-'));
  const port = await freePort();
  const config = caddyfileFor(template, upstreams, `http://127.0.0.1:${port}`);
  writeFileSync(join(dir, 'Caddyfile'), config);
  // Caddy keeps its state (autosave.json, certificates, locks) under HOME and the XDG directories: all in `dir`.
  const env = { ...process.env, HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), XDG_DATA_HOME: join(dir, 'data') };
  const child = spawn(CADDY_BIN, ['run', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], {
    cwd: dir,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Caddy binds its listener once the configuration loaded; give up when it exits instead.
  for (let i = 0; !(await answers(port)); i++) {
    if (child.exitCode !== null || i > 400) {
      child.kill('SIGTERM');
      throw new Error(`caddy did not start:\n${stderr}`);
    }
    await sleep(25);
  }
  return {
    url: `http://127.0.0.1:${port}`,
    config,
    errors: () => stderr,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
