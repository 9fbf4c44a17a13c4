import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHttpClient, connectStdioClient } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let client: Client;
beforeAll(async () => {
  server = await startTestServer();
  client = await connectHttpClient(server.url);
});
afterAll(async () => {
  await client?.close();
  await server?.close();
});

describe('the MCP server utilities every client may use', () => {
  it('declares tools and logging, and nothing it does not serve (no prompts, resources or completions)', () => {
    const capabilities = client.getServerCapabilities();
    expect(capabilities).toMatchObject({ tools: { listChanged: false }, logging: {} });
    expect(capabilities).not.toHaveProperty('prompts');
    expect(capabilities).not.toHaveProperty('resources');
    expect(capabilities).not.toHaveProperty('completions');
  });

  it('accepts logging/setLevel with an empty result', async () => {
    expect(await client.setLoggingLevel('warning')).toEqual({});
  });

  it('refuses a logging level that does not exist with a JSON-RPC error', async () => {
    await expect(client.setLoggingLevel('loud' as never)).rejects.toBeInstanceOf(McpError);
  });

  it('answers ping with an empty result', async () => {
    expect(await client.ping()).toEqual({});
  });

  it('answers ping and logging/setLevel over stdio too', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-stdio-'));
    const stdio = await connectStdioClient({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    try {
      expect(stdio.client.getServerCapabilities()).toMatchObject({ logging: {} });
      expect(await stdio.client.setLoggingLevel('error')).toEqual({});
      expect(await stdio.client.ping()).toEqual({});
    } finally {
      await stdio.client.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
