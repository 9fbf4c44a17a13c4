import { spawn, type ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_PATH } from './mcp.js';
import { logLines } from './process.js';

/** `tollbooth serve` from the built CLI, running in a child process. */
export interface SpawnedServer {
  url: string;
  child: ChildProcess;
  dataDir: string;
  /** Everything the process wrote to stderr so far (its JSON log lines). */
  stderr(): string;
  /** The parsed log lines so far (lines that are not JSON are skipped). */
  logs(): Array<Record<string, unknown>>;
  /** Resolves when a log line whose `msg` is `msg` has been written. */
  logged(msg: string): Promise<Record<string, unknown>>;
  /** Resolves with the exit code (or the signal's name) once the process ended. */
  exited: Promise<number | string>;
  /** Kills the process if it still runs and removes its data directory. */
  stop(): Promise<void>;
}

const serveNodeOptions = () => (process.env.SERVE_NODE_OPTIONS ? { NODE_OPTIONS: process.env.SERVE_NODE_OPTIONS } : {});

/** Spawns `node dist/bin/cli.js serve [args]` on a free port of 127.0.0.1 (`npm run build` first) and waits until it listens. */
export async function spawnServe(
  env: Record<string, string>,
  args: readonly string[] = [],
  cli = CLI_PATH,
): Promise<SpawnedServer> {
  const dataDir = env.DATA_DIR ?? mkdtempSync(join(tmpdir(), 'tollbooth-spawned-'));
  const child = spawn(process.execPath, [cli, 'serve', ...args], {
    // SERVE_NODE_OPTIONS reaches the spawned server only (for profiling a bench's server, docs/development.md).
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      ...serveNodeOptions(),
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const watchers = new Set<() => void>();
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    for (const check of [...watchers]) check();
  });
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const logged = (msg: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const check = () => {
        const found = logLines(stderr).find((line) => line.msg === msg);
        if (found) {
          watchers.delete(check);
          resolve(found);
        }
      };
      watchers.add(check);
      check();
      void exited.then((code) => {
        if (watchers.delete(check)) reject(new Error(`tollbooth exited (${code}) before logging "${msg}":\n${stderr}`));
      });
    });
  const listening = await logged('tollbooth listening');
  return {
    url: String(listening.url),
    child,
    dataDir,
    stderr: () => stderr,
    logs: () => logLines(stderr),
    logged,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
      if (!env.DATA_DIR) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** An MCP client transport over a child process the test keeps hold of (its exit code, signals, stdin). */
class ChildStdioTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private readonly buffer = new ReadBuffer();

  constructor(private readonly child: ChildProcess) {}

  async start(): Promise<void> {
    this.child.stdout!.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (let message = this.buffer.readMessage(); message; message = this.buffer.readMessage())
        this.onmessage?.(message);
    });
    this.child.once('close', () => this.onclose?.());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.child.stdin!.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    this.child.stdin!.end();
  }
}

/** `tollbooth stdio` from the built CLI with the official MCP client connected over its stdin/stdout. */
export interface SpawnedStdio {
  client: Client;
  child: ChildProcess;
  stderr(): string;
  exited: Promise<number | string>;
  stop(): Promise<void>;
}

/** Spawns `node dist/bin/cli.js stdio [args]` (`npm run build` first) and connects the official MCP client to it. */
export async function spawnStdio(env: Record<string, string>, args: readonly string[] = []): Promise<SpawnedStdio> {
  const child = spawn(process.execPath, [CLI_PATH, 'stdio', ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const client = new Client({ name: 'tollbooth-test', version: '1.0.0' });
  await client.connect(new ChildStdioTransport(child));
  return {
    client,
    child,
    stderr: () => stderr,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}
