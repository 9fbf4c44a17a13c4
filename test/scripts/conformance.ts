/**
 * `npm run conformance`: the official MCP conformance suite and the MCP Inspector CLI against the built server.
 *
 * 1. Starts `dist/bin/cli.js serve` (build first: this script builds nothing) on a free port of 127.0.0.1 with the
 *    embedded defaults (fresh SQLite directory, no facilitator) and runs `@modelcontextprotocol/conformance server
 *    --suite all` against its /mcp with the baseline test/conformance/expected-failures.yml. The suite exits non-zero
 *    on a failure that is not in the baseline and on a baseline entry that passes (stale: remove it).
 * 2. Runs `@modelcontextprotocol/inspector --cli` against `dist/bin/cli.js stdio`: `tools/list --strict` must list
 *    every tool of the registry with no schema-portability error, and one unpaid `tools/call` must end with exit
 *    code 5 (the tool answered isError) carrying the x402 payment requirements.
 *
 * Both tools run on Node 22 through `npx -y -p node@22 …` at pinned versions; npx downloads them once into the npm
 * cache. Only the npm registry is needed. Prints a summary; exits 1 when anything is unexpected. With `--prefetch` it
 * only downloads them (and Node 22 alone, as `npm run test:sqlite-node22` takes it), runs nothing against a server and
 * needs no build: `.ci/run` does that in the background while the tests run, so this script does not wait on npm later.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeTools, paidTools as tools } from '../../tools/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(ROOT, 'dist/bin/cli.js');
/** The committed baseline; CONFORMANCE_BASELINE points elsewhere (checking the checker). */
const BASELINE = process.env.CONFORMANCE_BASELINE ?? join(ROOT, 'test/conformance/expected-failures.yml');
/** npx's package sets (each is its own entry of npx's cache) and the commands run from them. */
const PACKAGES = {
  conformance: ['-y', '-p', 'node@22', '-p', '@modelcontextprotocol/conformance@0.1.16'],
  inspector: ['-y', '-p', 'node@22', '-p', '@modelcontextprotocol/inspector@2.12.0'],
  node22: ['-y', '-p', 'node@22'],
};
const CONFORMANCE = [...PACKAGES.conformance, 'conformance'];
const INSPECTOR = [...PACKAGES.inspector, 'mcp-inspector', '--cli'];
/** The Inspector's exit code when the called tool answered with `isError: true`. */
const INSPECTOR_TOOL_IS_ERROR = 5;

const say = (line = '') => process.stdout.write(line + '\n');
const scratch = mkdtempSync(join(tmpdir(), 'tollbooth-conformance-'));
const verbose = process.argv.includes('--verbose');

/** npm settings for every npx call: quiet, and the usual npm cache and user config even when HOME is replaced. */
const npmEnv: Record<string, string> = {
  npm_config_cache: process.env.npm_config_cache ?? join(homedir(), '.npm'),
  npm_config_userconfig: process.env.npm_config_userconfig ?? join(homedir(), '.npmrc'),
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
  npm_config_loglevel: 'error',
};

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
  });
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  const address = probe.address();
  await new Promise<void>((r) => probe.close(() => r()));
  if (typeof address !== 'object' || !address) throw new Error('no free port');
  return address.port;
}

/** The server's environment: nothing from the caller's but PATH, so the embedded defaults apply. */
function serverEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...extra };
}

async function startServer(): Promise<{ url: string; stop: () => Promise<void>; log: () => string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, 'serve'], {
    env: serverEnv(join(scratch, 'serve'), { PORT: String(port), HOST: '127.0.0.1' }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr.on('data', (c: Buffer) => (log += c.toString('utf8')));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`the server exited with code ${child.exitCode} before it answered:\n${log}`);
    try {
      await fetch(`${url}/mcp`, { signal: AbortSignal.timeout(1000) });
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`the server did not answer on ${url} within 20 s:\n${log}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return {
    url,
    log: () => log,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

interface Check {
  status: string;
  name: string;
  errorMessage?: string;
}

/** Reads the suite's per-scenario results (`<dir>/server-<scenario>-<time>/checks.json`). */
function readResults(dir: string): Map<string, Check[]> {
  const byScenario = new Map<string, Check[]>();
  for (const entry of readdirSync(dir)) {
    const file = join(dir, entry, 'checks.json');
    if (!existsSync(file)) continue;
    const scenario = entry.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
    byScenario.set(scenario, JSON.parse(readFileSync(file, 'utf8')) as Check[]);
  }
  return byScenario;
}

function baselineNames(): string[] {
  return [...readFileSync(BASELINE, 'utf8').matchAll(/^\s+-\s+([\w-]+)/gm)].map((m) => m[1]!);
}

async function conformance(url: string): Promise<boolean> {
  const out = join(scratch, 'results');
  const args = [
    ...CONFORMANCE,
    'server',
    '--url',
    `${url}/mcp`,
    '--suite',
    'all',
    '--expected-failures',
    BASELINE,
    '-o',
    out,
  ];
  const result = await run('npx', args, { ...process.env, ...npmEnv }, 10 * 60_000);
  const ok = result.code === 0;
  const text = result.stdout + result.stderr;
  if (verbose || !ok) say(text);
  const results = existsSync(out) ? readResults(out) : new Map<string, Check[]>();
  const baseline = new Set(baselineNames());
  const passed = [...results].filter(([, checks]) => checks.every((c) => c.status !== 'FAILURE'));
  const failed = [...results].filter(([, checks]) => checks.some((c) => c.status === 'FAILURE'));
  const unexpected = failed.filter(([name]) => !baseline.has(name)).map(([name]) => name);
  const stale = passed.filter(([name]) => baseline.has(name)).map(([name]) => name);
  const warnings = [...results].flatMap(([name, checks]) =>
    checks.filter((c) => c.status === 'WARNING').map((c) => `${name}: ${c.name}`),
  );
  say(
    `MCP conformance (@modelcontextprotocol/conformance 0.1.16, all ${results.size} server scenarios) against ${url}/mcp:`,
  );
  say(`  passed ${passed.length}: ${passed.map(([n]) => n).join(', ')}`);
  say(
    `  expected failures ${failed.length - unexpected.length} (fixture tools, resources and prompts we do not serve; see test/conformance/expected-failures.yml)`,
  );
  if (warnings.length > 0) say(`  warnings (not failures): ${warnings.join('; ')}`);
  if (unexpected.length > 0) say(`  UNEXPECTED FAILURES: ${unexpected.join(', ')}`);
  if (stale.length > 0) say(`  STALE BASELINE ENTRIES (they pass now; remove them): ${stale.join(', ')}`);
  if (!ok && unexpected.length === 0 && stale.length === 0) say(`  the suite exited with code ${result.code}`);
  say(`  => ${ok ? 'OK' : 'FAILED'}`);
  return ok;
}

async function inspector(): Promise<boolean> {
  const home = join(scratch, 'home');
  const dataDir = join(scratch, 'stdio');
  const env = { ...process.env, ...npmEnv, HOME: home };
  const server = ['-e', `DATA_DIR=${dataDir}`, '-e', 'LOG_LEVEL=error', process.execPath, CLI, 'stdio'];
  let ok = true;
  say('MCP Inspector CLI (@modelcontextprotocol/inspector 2.12.0) against `tollbooth stdio`:');

  const listed = await run(
    'npx',
    [...INSPECTOR, ...server, '--method', 'tools/list', '--strict', '--format', 'json'],
    env,
    5 * 60_000,
  );
  const expected = [...tools, ...freeTools].map((t) => t.name);
  let names: string[] = [];
  try {
    names = (JSON.parse(listed.stdout) as { result: { tools: Array<{ name: string }> } }).result.tools.map(
      (t) => t.name,
    );
  } catch {
    /* reported below */
  }
  const missing = expected.filter((n) => !names.includes(n));
  const listOk = listed.code === 0 && missing.length === 0 && names.length === expected.length;
  say(
    `  tools/list --strict: exit ${listed.code}, ${names.length} tools (registry: ${expected.length})${missing.length ? `, missing ${missing.join(', ')}` : ''} => ${listOk ? 'OK' : 'FAILED'}`,
  );
  if (!listOk || verbose) say(listed.stderr.trim());
  ok &&= listOk;

  // A paid tool that takes its published example and has no precheck: unpaid, it must answer with the requirements.
  const tool = tools.find((t) => t.example !== undefined && t.precheck === undefined);
  if (!tool) throw new Error('no paid tool with an example input in the registry');
  const args = [
    '--method',
    'tools/call',
    '--tool-name',
    tool.name,
    '--tool-args-json',
    JSON.stringify(tool.example),
    '--format',
    'json',
  ];
  const called = await run('npx', [...INSPECTOR, ...server, ...args], env, 5 * 60_000);
  let challenge: { x402Version?: number; accepts?: unknown[] } = {};
  try {
    const result = (
      JSON.parse(called.stdout) as { result: { isError?: boolean; structuredContent?: typeof challenge } }
    ).result;
    challenge = result.isError ? (result.structuredContent ?? {}) : {};
  } catch {
    /* reported below */
  }
  const callOk =
    called.code === INSPECTOR_TOOL_IS_ERROR && challenge.x402Version === 2 && (challenge.accepts?.length ?? 0) > 0;
  say(
    `  unpaid tools/call ${tool.name}: exit ${called.code} (expected ${INSPECTOR_TOOL_IS_ERROR}), ${challenge.accepts?.length ?? 0} payment options => ${callOk ? 'OK' : 'FAILED'}`,
  );
  if (!callOk || verbose) say((called.stdout.slice(0, 2000) + '\n' + called.stderr).trim());
  ok &&= callOk;
  return ok;
}

/** Downloads both tools and Node 22 into npx's cache (the same package sets as the runs above), running nothing. */
async function prefetch(): Promise<number> {
  let code = 0;
  for (const set of Object.values(PACKAGES)) {
    const result = await run('npx', [...set, '-c', 'node --version'], { ...process.env, ...npmEnv }, 10 * 60_000);
    const names = set.filter((a) => a !== '-y' && a !== '-p').join(' ');
    say(`prefetched ${names}: ${result.code === 0 ? `ok (Node ${result.stdout.trim()})` : `exit ${result.code}`}`);
    if (result.code !== 0) code = 1;
  }
  return code;
}

async function main(): Promise<number> {
  if (process.argv.includes('--prefetch')) return prefetch();
  if (!existsSync(CLI)) {
    say(`${CLI} is missing: run \`npm run build\` first (this script builds nothing).`);
    return 1;
  }
  const server = await startServer();
  let suiteOk: boolean;
  try {
    suiteOk = await conformance(server.url);
  } finally {
    await server.stop();
  }
  if (!suiteOk && verbose) say(server.log());
  const inspectorOk = await inspector();
  say(`Conformance: MCP suite ${suiteOk ? 'passed' : 'FAILED'}, Inspector ${inspectorOk ? 'passed' : 'FAILED'}`);
  return suiteOk && inspectorOk ? 0 : 1;
}

main()
  .then((code) => {
    rmSync(scratch, { recursive: true, force: true });
    process.exit(code);
  })
  .catch((err: unknown) => {
    say(`conformance run failed: ${String((err as Error)?.stack ?? err)}`);
    rmSync(scratch, { recursive: true, force: true });
    process.exit(1);
  });
