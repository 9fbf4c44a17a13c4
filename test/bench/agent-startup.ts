/**
 * (j) How long an MCP host waits for remote mode: `tollbooth stdio --remote <url>` spawned, then `initialize` and
 * `tools/list` answered (the remote's tools listed over its /mcp), without a wallet and with an EVM key, against the
 * official MCP SDK's bare stdio server (the floor: bare-mcp-stdio.mjs). Starts alternate; medians with p25–p75.
 * BENCH_AGENT_STARTS (default 9), BENCH_AGENT_CLI (another build's dist/bin/cli.js, measured beside this one).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI, median, startProc } from './paid-procs.js';
import { facilitatorSpec, oursSpec } from './paid-servers.js';

const BARE = fileURLToPath(new URL('./bare-mcp-stdio.mjs', import.meta.url));
const write = (line: string) => process.stdout.write(line + '\n');
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))] ?? NaN;

interface Target {
  name: string;
  args: string[];
  env: Record<string, string>;
}

/** Milliseconds from spawn to `initialize` answered, and to `tools/list` answered after it. */
async function startOnce(target: Target): Promise<{ init: number; list: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-agent-'));
  const start = performance.now();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: target.args,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', AGENT_DATA_DIR: dataDir, ...target.env },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  try {
    await client.connect(transport);
    const init = performance.now() - start;
    await client.listTools();
    return { init, list: performance.now() - start };
  } finally {
    await client.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Runs the start-up comparison and prints it; resolves false when a start failed. */
export async function runAgentStartup(label = '(j)'): Promise<boolean> {
  const starts = Number(process.env.BENCH_AGENT_STARTS ?? 9);
  const facilitator = await startProc(facilitatorSpec());
  const seller = await startProc(oursSpec(facilitator.url));
  const evmKey = { WALLET_EVM_PRIVATE_KEY: `0x${'11'.repeat(32)}` };
  const remote = (cli: string) => [cli, 'stdio', '--remote', seller.url];
  const other = process.env.BENCH_AGENT_CLI;
  const targets: Target[] = [
    { name: 'remote mode, no wallet', args: remote(CLI), env: {} },
    { name: 'remote mode, EVM key', args: remote(CLI), env: evmKey },
    ...(other
      ? [
          { name: 'BENCH_AGENT_CLI, no wallet', args: remote(other), env: {} },
          { name: 'BENCH_AGENT_CLI, EVM key', args: remote(other), env: evmKey },
        ]
      : []),
    { name: 'bare MCP SDK stdio server', args: [BARE], env: {} },
  ];
  const times = targets.map(() => ({ init: [] as number[], list: [] as number[] }));
  let ok = true;
  try {
    for (let round = 0; round <= starts; round++)
      for (const [i, target] of targets.entries()) {
        const t = await startOnce(target).catch(() => undefined);
        if (!t) ok = false;
        // Round 0 warms the disk cache and is not counted.
        if (t && round > 0) {
          times[i]!.init.push(t.init);
          times[i]!.list.push(t.list);
        }
      }
  } finally {
    await seller.stop();
    await facilitator.stop();
  }
  write(
    `${label} MCP host's wait for remote mode: spawn -> initialize answered -> tools/list answered (${starts} starts each, alternating; median, p25-p75)`,
  );
  const floor = median(times[targets.length - 1]!.list);
  for (const [i, target] of targets.entries()) {
    const { init, list } = times[i]!;
    const spread = (xs: number[]) => `${quantile(xs, 0.25).toFixed(0)}-${quantile(xs, 0.75).toFixed(0)}`;
    write(
      `    ${target.name.padEnd(28)} initialize ${median(init).toFixed(0).padStart(5)} ms (${spread(init)}), tools/list ${median(list).toFixed(0).padStart(5)} ms (${spread(list)}); ${(median(list) / floor).toFixed(2)}x the bare server`,
    );
  }
  if (!ok) write('    a start failed (see above)');
  return ok;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = (await runAgentStartup()) ? 0 : 1;
