/**
 * The installs of `npm run pack:check` beyond the empty directory: the tarball added to a project that already uses
 * current `viem`, `@x402/*` and the MCP SDK (the case that once made npm loop for minutes), and installed and run on
 * Node 22 and 24 taken from npm (`npx -p node@<major>`). Every install reuses npm's cache (`--prefer-offline`) and
 * is bounded: npm still resolving after three minutes fails the check rather than holding CI.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Thrown by a check that cannot run here (e.g. Node 24 cannot be had from npm): reported as skipped, with why. */
export class Skipped extends Error {}

/** What the checks need from pack-check: its work directory, the tarball, its version and its clean environment. */
export interface PackContext {
  work: string;
  tarball: string;
  version: string;
  env: (extra?: Record<string, string>) => Record<string, string>;
}

interface Ran {
  code: number | string;
  stdout: string;
  stderr: string;
  seconds: number;
}

/** Longest an install may take before the check fails: a guard against npm's resolver looping, not a timing goal. */
const INSTALL_LIMIT_MS = 180_000;
const NPM_FLAGS = ['--no-audit', '--no-fund', '--prefer-offline'];

/** Runs a command in its own process group; past `limitMs` the whole group is killed and the run reports `timeout`. */
function run(command: string, args: string[], cwd: string, env: Record<string, string>, limitMs: number) {
  const at = Date.now();
  return new Promise<Ran>((resolve) => {
    const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, limitMs);
    const done = (code: number | string) => {
      clearTimeout(timer);
      resolve({ code: timedOut ? 'timeout' : code, stdout, stderr, seconds: Math.round((Date.now() - at) / 1000) });
    };
    child.once('error', (err) => done(err.message));
    child.once('close', (code, signal) => done(code ?? signal ?? -1));
  });
}

/** npm's warnings in an install's output, counted by kind (`ERESOLVE ×3, EBADENGINE ×1`), or `no warnings`. */
export function warningSummary(output: string): string {
  const kinds = new Map<string, number>();
  for (const line of output.split('\n')) {
    const kind = /^npm warn (\S+)/.exec(line)?.[1];
    if (kind) kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  if (kinds.size === 0) return 'no warnings';
  return [...kinds].map(([kind, count]) => `${kind} ×${count}`).join(', ');
}

function failed(what: string, ran: Ran): Error {
  const why = ran.code === 'timeout' ? `still running after ${INSTALL_LIMIT_MS / 1000} s` : `exit ${ran.code}`;
  const lines = ran.stderr.split('\n').length;
  return new Error(
    `${what}: ${why} (${lines} lines on stderr, ${warningSummary(ran.stderr)}):\n${ran.stderr.slice(-3000)}`,
  );
}

function project(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'existing-project', private: true }) + '\n');
  return dir;
}

/**
 * A project that already depends on the current `viem`, `@x402/core`, `@x402/evm`, `@x402/fetch` and MCP SDK gets the
 * tarball added: npm must finish in bounded time, the bin must run, and tollbooth must share the project's viem.
 */
export async function existingProject(ctx: PackContext): Promise<string> {
  const dir = project(join(ctx.work, 'existing-project'));
  const current = ['viem', '@x402/core', '@x402/evm', '@x402/fetch', '@modelcontextprotocol/sdk'];
  const first = await run(
    'npm',
    ['install', ...NPM_FLAGS, ...current.map((name) => `${name}@latest`)],
    dir,
    ctx.env(),
    INSTALL_LIMIT_MS,
  );
  if (first.code !== 0) throw failed('installing the current viem, @x402/* and MCP SDK', first);
  const added = await run('npm', ['install', ...NPM_FLAGS, ctx.tarball], dir, ctx.env(), INSTALL_LIMIT_MS);
  if (added.code !== 0) throw failed('npm install <tarball> next to them', added);
  const bin = join(dir, 'node_modules', '.bin', 'tollbooth');
  const version = await run(bin, ['--version'], dir, ctx.env(), 60_000);
  if (version.code !== 0 || version.stdout.trim() !== ctx.version) throw failed('tollbooth --version', version);
  const help = await run(bin, ['help'], dir, ctx.env(), 60_000);
  if (help.code !== 0 || !help.stdout.includes('tollbooth stdio')) throw failed('tollbooth help', help);
  if (existsSync(join(dir, 'node_modules', 'tollbooth', 'node_modules', 'viem')))
    throw new Error(
      "tollbooth got its own copy of viem instead of sharing the project's (its viem range is too narrow)",
    );
  const viem = (
    JSON.parse((await run('npm', ['ls', 'viem', '--json', '--depth=0'], dir, ctx.env(), 60_000)).stdout) as {
      dependencies?: { viem?: { version?: string } };
    }
  ).dependencies?.viem?.version;
  return `added in ${added.seconds} s next to viem ${viem} (${warningSummary(added.stderr)}); tollbooth --version and help run`;
}

/** `npx -y --package <tarball> tollbooth --version` from a directory without it: npm installs it into npx's cache. */
export async function npxTarball(ctx: PackContext): Promise<string> {
  const dir = project(join(ctx.work, 'npx'));
  const ran = await run(
    'npx',
    ['-y', '--package', ctx.tarball, 'tollbooth', '--version'],
    dir,
    ctx.env(),
    INSTALL_LIMIT_MS,
  );
  if (ran.code !== 0 || ran.stdout.trim() !== ctx.version) throw failed('npx --package <tarball>', ran);
  return `${ctx.version} in ${ran.seconds} s (${warningSummary(ran.stderr)})`;
}

/**
 * Installs the tarball into an empty project with Node `major` from npm (`npx -p node@<major>`, the system npm running
 * on it) and runs `tollbooth --version` and `tollbooth help` there. Skipped, saying why, when that Node cannot be had.
 */
export async function onNode(ctx: PackContext, major: number): Promise<string> {
  const dir = project(join(ctx.work, `node-${major}`));
  const npx = (script: string, limitMs: number) =>
    run('npx', ['-y', '-p', `node@${major}`, '-c', script], dir, ctx.env(), limitMs);
  const probe = await npx('node --version', 120_000);
  const node = probe.stdout.trim();
  if (probe.code !== 0 || !node.startsWith(`v${major}.`))
    throw new Skipped(`node@${major} could not be had from npm (${probe.code}: ${probe.stderr.trim().slice(-300)})`);
  const install = await npx(`npm install ${NPM_FLAGS.join(' ')} '${ctx.tarball}'`, INSTALL_LIMIT_MS);
  if (install.code !== 0) throw failed(`npm install <tarball> on Node ${node}`, install);
  const ran = await npx('tollbooth --version && tollbooth help', 60_000);
  if (ran.code !== 0 || !ran.stdout.startsWith(ctx.version) || !ran.stdout.includes('tollbooth stdio'))
    throw failed(`tollbooth --version and help on Node ${node}`, ran);
  return `Node ${node}: installed in ${install.seconds} s (${warningSummary(install.stderr)}); --version and help run`;
}

interface Entry {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * mcp.json's entries that start the package through npx, filled in as a user does: the tarball's
 * `/absolute/path/to/tollbooth-<version>.tgz` becomes the packed one, the wallet key file a file holding a fresh key
 * (it pays nothing: the check only lists tools), and other `/absolute/path/to/…` paths directories of the work dir.
 */
export function mcpJsonNpxEntries(root: string, ctx: PackContext): Array<[string, Entry]> {
  const { mcpServers } = JSON.parse(readFileSync(join(root, 'mcp.json'), 'utf8')) as {
    mcpServers: Record<string, Partial<Entry>>;
  };
  const keyFile = join(ctx.work, 'evm.key');
  writeFileSync(keyFile, `0x${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  const fill = (value: string) =>
    value === '/absolute/path/to/evm.key'
      ? keyFile
      : value === `/absolute/path/to/tollbooth-${ctx.version}.tgz`
        ? ctx.tarball
        : value.replace(/^\/absolute\/path\/to\/(.*)$/, (_, rest: string) =>
            join(ctx.work, 'filled', rest.replace(/\W+/g, '-')),
          );
  return Object.entries(mcpServers).flatMap(([name, entry]): Array<[string, Entry]> =>
    entry.command === 'npx' && entry.args
      ? [
          [
            name,
            {
              command: 'npx',
              args: entry.args.map(fill),
              env: Object.fromEntries(Object.entries(entry.env ?? {}).map(([key, value]) => [key, fill(value)])),
            },
          ],
        ]
      : [],
  );
}
