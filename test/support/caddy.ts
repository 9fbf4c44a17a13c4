import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './nginx.js';
import { describeWithProgram, runProxy, type RunningProxy } from './proxy-process.js';

/** The distribution's caddy (Debian's `caddy` package); CADDY_BIN points elsewhere. */
export const CADDY_BIN = process.env.CADDY_BIN || '/usr/bin/caddy';

/** `describe` for tests that run caddy: skipped without it, failing instead once `.ci/run` installed it. */
export const describeWithCaddy = describeWithProgram({
  name: 'caddy',
  bin: CADDY_BIN,
  requiredEnv: 'TOLLBOOTH_TEST_CADDY',
  hint: 'apt-get install caddy, as `.ci/run` does, or set CADDY_BIN',
});

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
export type RunningCaddy = RunningProxy;

/** Starts `caddy run` with the Caddyfile in front of `upstreams`; resolves once its port accepts connections. */
export async function startCaddy(template: string, upstreams: readonly string[]): Promise<RunningCaddy> {
  const dir = mkdtempSync(join(tmpdir(), 'tollbooth-caddy-'));
  const port = await freePort();
  const config = caddyfileFor(template, upstreams, `http://127.0.0.1:${port}`);
  writeFileSync(join(dir, 'Caddyfile'), config);
  // Caddy keeps its state (autosave.json, certificates, locks) under HOME and the XDG directories: all in `dir`.
  const env = { ...process.env, HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), XDG_DATA_HOME: join(dir, 'data') };
  const args = ['run', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile'];
  // Caddy binds its listener once the configuration loaded.
  return runProxy({ name: 'caddy', bin: CADDY_BIN, args, dir, port, config, env });
}
