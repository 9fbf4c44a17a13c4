import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeWithProgram } from './proxy-process.js';

/** The distribution's nginx (Debian's `nginx` package); NGINX_BIN points elsewhere. */
export const NGINX_BIN = process.env.NGINX_BIN || '/usr/sbin/nginx';

/** `describe` for tests that run nginx: skipped without it, failing instead once `.ci/run` installed it. */
export const describeWithNginx = describeWithProgram({
  name: 'nginx',
  bin: NGINX_BIN,
  requiredEnv: 'TOLLBOOTH_TEST_NGINX',
  hint: 'apt-get install nginx, as `.ci/run` does, or set NGINX_BIN',
});

/** A free TCP port of 127.0.0.1 (bound once and released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * The shipped site file made runnable here: every upstream block's `server` lines become `upstreams` (host:port) and
 * `listen 80;` becomes `listen`; nothing else changes. Throws when the file no longer has what it replaces.
 */
export function siteFor(template: string, upstreams: readonly string[], listen: string): string {
  const servers = /^([ \t]*)server 127\.0\.0\.1:\d+;\n(?:[ \t]*server 127\.0\.0\.1:\d+;\n)*/gm;
  if (!servers.test(template)) throw new Error('the nginx template has no upstream server lines');
  const listens = /^([ \t]*)listen 80;$/m;
  if (!listens.test(template)) throw new Error('the nginx template has no `listen 80;` line');
  return template
    .replace(servers, (_all, indent: string) => upstreams.map((u) => `${indent}server ${u};\n`).join(''))
    .replace(listens, (_all, indent: string) => `${indent}listen ${listen};`);
}

/** An nginx master process on a free port of 127.0.0.1 with its own prefix, temp dirs and error log. */
export interface RunningNginx {
  url: string;
  /** The site file it loaded (the template after siteFor). */
  site: string;
  /** The error log so far. */
  errors(): string;
  stop(): Promise<void>;
}

/** The main configuration around the site file: only what a non-root nginx in a temp dir needs. */
function mainConf(dir: string): string {
  const asRoot = process.getuid?.() === 0 ? 'user root;\n' : '';
  return `${asRoot}daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
events { worker_connections 512; }
http {
    access_log off;
    client_body_temp_path ${dir}/client_body;
    proxy_temp_path ${dir}/proxy;
    fastcgi_temp_path ${dir}/fastcgi;
    uwsgi_temp_path ${dir}/uwsgi;
    scgi_temp_path ${dir}/scgi;
    include ${dir}/site.conf;
}
`;
}

/** Starts nginx in the foreground with the site file in front of `upstreams`; resolves once its port is bound. */
export async function startNginx(template: string, upstreams: readonly string[]): Promise<RunningNginx> {
  const dir = mkdtempSync(join(tmpdir(), 'tollbooth-nginx-'));
  chmodSync(dir, 0o755);
  const port = await freePort();
  const site = siteFor(template, upstreams, `127.0.0.1:${port}`);
  writeFileSync(join(dir, 'site.conf'), site);
  writeFileSync(join(dir, 'nginx.conf'), mainConf(dir));
  const errorLog = join(dir, 'error.log');
  const errors = () => (existsSync(errorLog) ? readFileSync(errorLog, 'utf8') : '');
  const child = spawn(NGINX_BIN, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', errorLog], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // nginx writes its pid file after it bound the listening socket; give up when it exits instead.
  for (let i = 0; !existsSync(join(dir, 'nginx.pid')); i++) {
    if (child.exitCode !== null || i > 400) {
      child.kill('SIGTERM');
      throw new Error(`nginx did not start:\n${stderr}\n${errors()}`);
    }
    await sleep(25);
  }
  return {
    url: `http://127.0.0.1:${port}`,
    site,
    errors,
    stop: async () => {
      // SIGTERM: the master stops its workers and exits (SIGKILL would leave the workers behind).
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
