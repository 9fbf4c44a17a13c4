import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { CLI_PATH } from './mcp.js';

/** How the test's MCP client answers an elicitation request (absent: the client declares no elicitation support). */
export type ElicitAnswer = (message: string) => ElicitResult;

/** An agent-side stdio server (`tollbooth stdio --remote …`) spawned from the built CLI, with the official MCP client connected. */
export interface AgentProcess {
  client: Client;
  stderr: () => string;
  /** Messages of the elicitation requests the client received. */
  asked: string[];
  close(): Promise<void>;
}

/** A fresh data directory for an agent's store. */
export function agentDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'tollbooth-agent-'));
}

/** Spawns `node dist/bin/cli.js stdio <args>` with only PATH and `env`, and connects the official MCP client. */
export async function spawnAgent(
  args: string[],
  env: Record<string, string>,
  elicit?: ElicitAnswer,
): Promise<AgentProcess> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI_PATH, 'stdio', ...args],
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const asked: string[] = [];
  const client = new Client(
    { name: 'tollbooth-agent-test', version: '1.0.0' },
    { capabilities: elicit ? { elicitation: { form: {} } } : {} },
  );
  if (elicit) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return elicit(request.params.message);
    });
  }
  await client.connect(transport);
  return { client, stderr: () => stderr, asked, close: () => client.close() };
}

/** The error body of an error tool result (its first text content). */
export function errorOf(result: unknown): {
  code: string;
  message: string;
  retryable: boolean;
  details?: Record<string, unknown>;
} {
  const first = ((result as { content?: unknown }).content as Array<{ type: string; text?: string }> | undefined)?.[0];
  return (JSON.parse(first?.text ?? '{}') as { error: { code: string; message: string; retryable: boolean } }).error;
}

/** What a `tollbooth call` run printed and how it exited. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `node dist/bin/cli.js <args>` with only PATH and `env` (asynchronously, so in-process servers keep answering). */
export function runCli(args: string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_PATH, ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 120_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
