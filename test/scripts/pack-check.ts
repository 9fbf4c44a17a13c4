/**
 * `npm run pack:check`: proves the npm package works for someone who never cloned the repository. It packs a clean
 * clone of this tree (`npm pack`, which builds through `prepack`), installs the tarball into an empty directory from the npm registry,
 * and from there runs what the package promises: `npx tollbooth serve` (a bare paid probe gets 402 with
 * PAYMENT-REQUIRED, SIGTERM stops it gracefully), `npx tollbooth stdio` driven by the official MCP client (16+ tools
 * listed, an unpaid call answered with the payment requirements), `npx tollbooth call --help`, and every `npx` entry
 * of mcp.json as shipped (its `/absolute/path/to/…` paths filled in, the tarball's among them). Then it adds the tarball
 * to a project that already uses current viem, @x402/* and the MCP SDK, and installs it on Node 22 and 24 from npm
 * (./pack-check-projects.ts). Prints one line per check and a summary; exits 1 when any check failed
 * (PACK_CHECK_KEEP=1 keeps the work directory of a failed run).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { alive, logLines } from '../support/process.js';
import {
  existingProject,
  mcpJsonNpxEntries,
  npxTarball,
  onNode,
  Skipped,
  type PackContext,
} from './pack-check-projects.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const exec = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'tollbooth-pack-check-'));
const started = Date.now();
const results: Array<{ name: string; ok: boolean; seconds: number; detail: string }> = [];
const children = new Set<ChildProcess>();
const pids = new Set<number>();

const seconds = (since: number) => Math.round((Date.now() - since) / 100) / 10;
const say = (line: string) => process.stderr.write(line + '\n');

/** Runs one named check, recording its outcome and duration; a failure is reported, not thrown. */
async function check(name: string, body: () => Promise<string>): Promise<boolean> {
  const at = Date.now();
  try {
    const detail = await body();
    results.push({ name, ok: true, seconds: seconds(at), detail });
    say(`  ok    ${name} (${seconds(at)} s): ${detail}`);
    return true;
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    if (err instanceof Skipped) {
      results.push({ name, ok: true, seconds: seconds(at), detail: `skipped: ${detail}` });
      say(`  skip  ${name}: ${detail}`);
      return true;
    }
    results.push({ name, ok: false, seconds: seconds(at), detail });
    say(`  FAIL  ${name} (${seconds(at)} s): ${detail}`);
    return false;
  }
}

function withTimeout<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/** The environment of every command run from the install directory: nothing of this shell's settings leaks in. */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? work, LOG_LEVEL: 'info', ...extra };
}

const clone = join(work, 'clone');
const install = join(work, 'install');
let tarball = '';
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };

/**
 * A clean clone of the working tree: the files git tracks or would track (no dist/, data or other ignored output),
 * with the installed node_modules linked in. Packing there proves the build needs nothing left over from earlier
 * builds, and leaves this tree's dist/ alone.
 */
async function cleanClone(): Promise<string> {
  const { stdout } = await exec('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
  });
  const files = stdout.split('\0').filter((file) => file !== '' && existsSync(join(root, file)));
  for (const file of files) {
    mkdirSync(dirname(join(clone, file)), { recursive: true });
    copyFileSync(join(root, file), join(clone, file));
  }
  symlinkSync(join(root, 'node_modules'), join(clone, 'node_modules'), 'dir');
  return `${files.length} files`;
}

async function pack(): Promise<string> {
  const out = join(work, 'pack');
  mkdirSync(out);
  const { stdout } = await exec('npm', ['pack', '--json', '--pack-destination', out], {
    cwd: clone,
    maxBuffer: 64 * 1024 * 1024,
  });
  const [report] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{
    filename: string;
    size: number;
    files: Array<{ path: string }>;
  }>;
  const paths = report!.files.map((file) => file.path);
  const missing = ['dist/bin/cli.js', 'LICENSE', 'README.md', 'server.json', 'mcp.json', '.env.example'].filter(
    (path) => !paths.includes(path),
  );
  if (missing.length > 0) throw new Error(`the tarball lacks ${missing.join(', ')}`);
  tarball = join(out, report!.filename);
  return `${report!.filename}, ${paths.length} files, ${Math.round(report!.size / 1024)} kB`;
}

async function installTarball(): Promise<string> {
  mkdirSync(install);
  writeFileSync(join(install, 'package.json'), JSON.stringify({ name: 'tollbooth-pack-check', private: true }) + '\n');
  await exec('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', tarball], {
    cwd: install,
    env: cleanEnv(),
    maxBuffer: 64 * 1024 * 1024,
  });
  const installed = JSON.parse(readFileSync(join(install, 'node_modules', 'tollbooth', 'package.json'), 'utf8')) as {
    version: string;
  };
  return `tollbooth ${installed.version} into an empty directory`;
}

async function serve(): Promise<string> {
  const dataDir = mkdtempSync(join(work, 'serve-data-'));
  // --no: run the installed package, never fetch one.
  const child = spawn('npx', ['--no', 'tollbooth', 'serve'], {
    cwd: install,
    env: cleanEnv({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  let stderr = '';
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const listening = await withTimeout(
    60_000,
    'tollbooth serve',
    new Promise<Record<string, unknown>>((resolve, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
        const line = logLines(stderr).find((l) => l.msg === 'tollbooth listening');
        if (line) resolve(line);
      });
      void exited.then((code) => reject(new Error(`exited (${code}) before listening:\n${stderr}`)));
    }),
  );
  const pid = Number(listening.pid);
  pids.add(pid);
  const url = new URL('/api/annuity', String(listening.url));
  const probe = await fetch(url, { method: 'POST' });
  await probe.body?.cancel();
  if (probe.status !== 402) throw new Error(`POST ${url.pathname} answered ${probe.status}, not 402`);
  if (!probe.headers.get('payment-required')) throw new Error(`the 402 has no PAYMENT-REQUIRED header`);
  // A malformed MPP credential is read by the bundled mppx code (loaded with the first credential): a 402 problem.
  const mpp = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Payment eyJmb28iOiJiYXIifQ' },
    body: JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 }),
  });
  const problem = (await mpp.json()) as { type?: string };
  if (mpp.status !== 402 || !String(problem.type).endsWith('/malformed-credential'))
    throw new Error(`a malformed MPP credential got ${mpp.status} ${JSON.stringify(problem).slice(0, 300)}`);
  // npx runs the bin through a shell: signal the server itself, as a supervisor of the installed bin would.
  process.kill(pid, 'SIGTERM');
  const code = await withTimeout(40_000, 'graceful stop', exited);
  if (code !== 0) throw new Error(`exited with ${code} after SIGTERM:\n${stderr}`);
  if (!logLines(stderr).some((l) => l.msg === 'stopped'))
    throw new Error(`no "stopped" log line after SIGTERM:\n${stderr}`);
  return `402 with PAYMENT-REQUIRED on POST ${url.pathname}, an MPP credential read; SIGTERM: stopped, exit 0`;
}

/** Starts an MCP stdio server with the official client, lists its tools and (`unpaidCall`) makes one unpaid call. */
async function stdioSession(
  command: string,
  args: string[],
  env: Record<string, string>,
  unpaidCall = true,
): Promise<string> {
  const transport = new StdioClientTransport({ command, args, cwd: install, env: cleanEnv(env), stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const client = new Client({ name: 'tollbooth-pack-check', version: '1.0.0' });
  try {
    await withTimeout(60_000, `${command} ${args.join(' ')}`, client.connect(transport));
    const { tools } = await client.listTools();
    // Remote mode lists what its remote publishes beside the agent's own free tools; mcp.json's remote entries name
    // tollbooth.example.com, which does not answer here, so they show the agent's tools only.
    if (args.includes('--remote')) {
      if (!tools.some((t) => t.name === 'wallet-status'))
        throw new Error(`remote mode listed ${tools.map((t) => t.name).join(', ')}: no wallet-status`);
      return `${tools.length} local tools listed (the remote it names does not answer here)`;
    }
    if (tools.length < 16) throw new Error(`listed ${tools.length} tools, expected 16 or more`);
    if (!unpaidCall) return `${tools.length} tools listed`;
    // Unpaid: an error result carrying the payment requirements, which the official client must accept.
    const unpaid = await client.callTool({
      name: 'annuity',
      arguments: { payment: 100, ratePerPeriod: 0.05, periods: 10 },
    });
    if (unpaid.isError !== true)
      throw new Error('an unpaid annuity call was not answered with the payment requirements');
    const accepts = (unpaid.structuredContent as { accepts?: unknown[] } | undefined)?.accepts;
    if (!Array.isArray(accepts) || accepts.length === 0)
      throw new Error(`the unpaid call's result has no payment options: ${JSON.stringify(unpaid).slice(0, 500)}`);
    return `${tools.length} tools listed; an unpaid call answered with ${accepts.length} payment options`;
  } catch (err) {
    throw new Error(`${(err as Error).message}${stderr ? `\n${stderr}` : ''}`, { cause: err });
  } finally {
    await client.close().catch(() => undefined);
  }
}

async function callHelp(): Promise<string> {
  const { stdout } = await exec('npx', ['--no', 'tollbooth', 'call', '--help'], { cwd: install, env: cleanEnv() });
  if (!stdout.includes('tollbooth call <tool | url>')) throw new Error(`unexpected help text:\n${stdout}`);
  return 'exit 0 with the usage text';
}

async function main(): Promise<number> {
  say(`pack-check: npm pack, install the tarball in an empty directory, run it from there (work dir ${work})`);
  const packed =
    (await check('clean clone of the working tree', cleanClone)) &&
    (await check('npm pack in the clone (prepack builds dist/)', pack)) &&
    (await check('npm install <tarball> in an empty directory', installTarball));
  if (packed) {
    await check('npx tollbooth serve', serve);
    await check('npx tollbooth stdio with the MCP SDK client', () =>
      stdioSession('npx', ['--no', 'tollbooth', 'stdio'], { DATA_DIR: mkdtempSync(join(work, 'stdio-data-')) }),
    );
    await check('npx tollbooth call --help', callHelp);
    const ctx: PackContext = { work, tarball, version, env: cleanEnv };
    const entries = mcpJsonNpxEntries(root, ctx);
    await check('mcp.json has npx entries', async () => {
      if (entries.length === 0) throw new Error('no mcp.json entry runs the package through npx');
      return entries.map(([name]) => name).join(', ');
    });
    // As docs/install.md says: one run by hand fills npx's cache, so an agent host's first start is quick. The other
    // installs run meanwhile (npm waits on the network more than on the CPU).
    const npxEntriesRun = async () => {
      await check('npx -y --package <tarball> tollbooth --version (fills the npx cache)', () => npxTarball(ctx));
      for (const [name, entry] of entries) {
        // Listing only: a remote entry's paid call would go to the deployment it names.
        await check(`mcp.json "${name}" as shipped (paths filled in)`, () =>
          stdioSession(entry.command, entry.args, entry.env, false),
        );
      }
    };
    await Promise.all([
      npxEntriesRun(),
      check('npm install <tarball> into a project using current viem, @x402/* and the MCP SDK', () =>
        existingProject(ctx),
      ),
      check('Node 22: npm install <tarball>, tollbooth runs', () => onNode(ctx, 22)),
      check('Node 24: npm install <tarball>, tollbooth runs', () => onNode(ctx, 24)),
    ]);
  }
  const failed = results.filter((r) => !r.ok);
  say(`pack-check: ${results.length - failed.length} passed, ${failed.length} failed in ${seconds(started)} s`);
  return failed.length === 0 ? 0 : 1;
}

let code = 1;
try {
  code = await main();
} finally {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  if (code === 0 || !process.env.PACK_CHECK_KEEP) rmSync(work, { recursive: true, force: true });
}
process.exit(code);
