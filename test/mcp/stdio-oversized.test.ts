import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { STDIO_MAX_LINE_BYTES } from '../../src/shared/stdio-transport.js';
import { CLI_PATH } from '../support/mcp.js';
import { startX402Catalog, x402Document } from '../support/x402-catalog.js';

interface Reply {
  jsonrpc: string;
  id: number | string | null;
  result?: { tools?: Array<{ name: string }>; serverInfo?: unknown };
  error?: { code: number; message: string };
}

/** `tollbooth stdio` from the built CLI, spoken to line by line (no MCP client, so any line can be sent). */
function spawnRaw(args: readonly string[], env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, [CLI_PATH, 'stdio', ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const replies: Reply[] = [];
  const waiting: Array<() => void> = [];
  let rest = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString('utf8')).split('\n');
    rest = lines.pop()!;
    for (const line of lines) if (line.trim()) replies.push(JSON.parse(line) as Reply);
    waiting.splice(0).forEach((wake) => wake());
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  /** Resolves with the first reply matching `match`, or rejects when the process ends first. */
  const reply = async (match: (r: Reply) => boolean): Promise<Reply> => {
    for (;;) {
      const found = replies.find(match);
      if (found) return found;
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`the server exited (${child.exitCode ?? child.signalCode}) without the reply: ${stderr}`);
      await Promise.race([new Promise<void>((wake) => waiting.push(wake)), exited]);
    }
  };
  const send = (text: string) =>
    new Promise<void>((resolve, reject) => child.stdin!.write(text, (err) => (err ? reject(err) : resolve())));
  return { child, replies, reply, send, exited, stderr: () => stderr };
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'oversized-test', version: '1' } },
};

/** A syntactically valid tools/list request padded to `bytes` bytes on one line. */
function oversizedRequest(bytes: number): string {
  const head = '{"jsonrpc":"2.0","id":99,"method":"tools/list","params":{"_meta":{"pad":"';
  const tail = '"}}}';
  return head + 'x'.repeat(bytes - head.length - tail.length) + tail + '\n';
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** Sends initialize, a 20 MB line, then tools/list: the big line gets an error, the list still comes, the process lives. */
async function survivesOversizedLine(args: readonly string[], env: Record<string, string>): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-stdio-big-'));
  dirs.push(dataDir);
  const server = spawnRaw(args, { DATA_DIR: dataDir, ...env });
  try {
    await server.send(JSON.stringify(INITIALIZE) + '\n');
    expect((await server.reply((r) => r.id === 1)).result?.serverInfo).toBeDefined();
    await server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');

    const bytes = 20 * 1024 * 1024;
    await server.send(oversizedRequest(bytes));
    await server.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) + '\n');

    const refused = await server.reply((r) => r.id === null && r.error !== undefined);
    expect(refused.error!.code).toBe(-32600);
    expect(refused.error!.message).toContain(`limit of ${STDIO_MAX_LINE_BYTES} bytes`);
    expect(refused.error!.message).toContain(`${bytes} bytes`);
    const listed = await server.reply((r) => r.id === 2);
    expect(listed.result?.tools?.map((t) => t.name)).toContain('annuity');
    // The oversized request itself (id 99) was never read, so never answered.
    expect(server.replies.some((r) => r.id === 99)).toBe(false);
    expect(server.child.exitCode).toBeNull();
    expect(server.stderr()).toContain('stdio line over the limit discarded');
  } finally {
    server.child.stdin!.end();
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
    await server.exited;
  }
}

describe('the stdio server and a JSON-RPC line over its limit (the built CLI)', () => {
  it('answers a 20 MB line with Invalid Request naming the limit, and keeps answering the lines after it', async () => {
    await survivesOversizedLine([], {});
  }, 60_000);

  it('does the same in remote mode, which reads stdin through the same transport', async () => {
    // Remote mode lists the tools its remote publishes (here a bare catalog); nothing here is paid.
    const catalog = await startX402Catalog(
      x402Document([{ resource: '/api/annuity', method: 'POST', name: 'annuity' }]),
    );
    try {
      await survivesOversizedLine(['--remote', catalog.url], {});
    } finally {
      await catalog.close();
    }
  }, 60_000);
});
