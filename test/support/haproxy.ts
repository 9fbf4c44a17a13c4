import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './nginx.js';
import { describeWithProgram, runProxy, type RunningProxy } from './proxy-process.js';

/** The distribution's HAProxy (Debian's `haproxy` package); HAPROXY_BIN points elsewhere. */
export const HAPROXY_BIN = process.env.HAPROXY_BIN || '/usr/sbin/haproxy';

/** `describe` for tests that run HAProxy: skipped without it, failing instead once `.ci/run` installed it. */
export const describeWithHaproxy = describeWithProgram({
  name: 'haproxy',
  bin: HAPROXY_BIN,
  requiredEnv: 'TOLLBOOTH_TEST_HAPROXY',
  hint: 'apt-get install haproxy, as `.ci/run` does, or set HAPROXY_BIN',
});

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

/** An HAProxy process in the foreground on a free port of 127.0.0.1 (its log: the alerts and warnings it writes to stderr). */
export type RunningHaproxy = RunningProxy;

/** Starts `haproxy -db` with the shipped configuration in front of `upstreams`; resolves once its port accepts connections. */
export async function startHaproxy(template: string, upstreams: readonly string[]): Promise<RunningHaproxy> {
  const dir = mkdtempSync(join(tmpdir(), 'tollbooth-haproxy-'));
  const port = await freePort();
  const config = haproxyConfigFor(template, upstreams, `127.0.0.1:${port}`);
  writeFileSync(join(dir, 'haproxy.cfg'), config);
  // -db: foreground, no daemon; -W would add a master process, which the test does not need.
  return runProxy({
    name: 'haproxy',
    bin: HAPROXY_BIN,
    args: ['-db', '-f', join(dir, 'haproxy.cfg')],
    dir,
    port,
    config,
  });
}
