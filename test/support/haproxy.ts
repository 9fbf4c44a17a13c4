import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'vitest';
import { freePort } from './nginx.js';

/** The distribution's HAProxy (Debian's `haproxy` package); HAPROXY_BIN points elsewhere. */
export const HAPROXY_BIN = process.env.HAPROXY_BIN || '/usr/sbin/haproxy';

/** Set by `.ci/run` once it installed HAProxy: then a missing HAProxy fails the tests instead of skipping them. */
const required = process.env.TOLLBOOTH_TEST_HAPROXY === 'required';

/**
 * `describe` for tests that run HAProxy. Without it the block is one skipped test whose name says so (or a failing
 * one when `.ci/run` required HAProxy).
 */
export function describeWithHaproxy(name: string, body: () => void): void {
  if (existsSync(HAPROXY_BIN)) return void describe(name, body);
  const note = `haproxy is not installed at ${HAPROXY_BIN} (apt-get install haproxy, as \`.ci/run\` does, or set HAPROXY_BIN)`;
  describe(name, () => {
    if (required) {
      it('needs haproxy (TOLLBOOTH_TEST_HAPROXY=required)', () => {
        throw new Error(note);
      });
    } else {
      it.skip(`SKIPPED — ${note}`, () => undefined);
    }
  });
}

/**
 * The shipped configuration made runnable here: `bind :80` becomes `bind <bind>` and each backend's `server` lines
 * become one line per upstream (host:port) with the same options; nothing else changes. Throws when the file no
 * longer has what it replaces.
 */
export function haproxyConfigFor(template: string, upstreams: readonly string[], bind: string): string {
  const servers = /^([ \t]*)server \S+ 127\.0\.0\.1:\d+( [^\n]*)?\n(?:[ \t]*server \S+ 127\.0\.0\.1:\d+[^\n]*\n)*/gm;
  if (!servers.test(template)) throw new Error('the HAProxy configuration has no `server … 127.0.0.1:…` lines');
  const binds = /^([ \t]*)bind :80$/m;
  if (!binds.test(template)) throw new Error('the HAProxy configuration has no `bind :80` line');
  return template
    .replace(servers, (_all, indent: string, options = '') =>
      upstreams.map((u, i) => `${indent}server tollbooth${i + 1} ${u}${options}\n`).join(''),
    )
    .replace(binds, (_all, indent: string) => `${indent}bind ${bind}`);
}

/** An HAProxy process in the foreground on a free port of 127.0.0.1 with its configuration in a temp dir. */
export interface RunningHaproxy {
  url: string;
  /** The configuration it loaded (the template after haproxyConfigFor). */
  config: string;
  /** Its alerts and warnings so far (HAProxy writes them to stderr). */
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

/** Starts `haproxy -db` with the shipped configuration in front of `upstreams`; resolves once its port accepts connections. */
export async function startHaproxy(template: string, upstreams: readonly string[]): Promise<RunningHaproxy> {
  const dir = mkdtempSync(join(tmpdir(), 'tollbooth-haproxy-'));
  const port = await freePort();
  const config = haproxyConfigFor(template, upstreams, `127.0.0.1:${port}`);
  writeFileSync(join(dir, 'haproxy.cfg'), config);
  // -db: foreground, no daemon; -W would add a master process, which the test does not need.
  const child = spawn(HAPROXY_BIN, ['-db', '-f', join(dir, 'haproxy.cfg')], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let i = 0; !(await answers(port)); i++) {
    if (child.exitCode !== null || i > 400) {
      child.kill('SIGTERM');
      throw new Error(`haproxy did not start:\n${stderr}`);
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
