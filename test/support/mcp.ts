import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fileURLToPath } from 'node:url';

/** Connects the official MCP client to a server's /mcp over streamable HTTP. */
export async function connectHttpClient(baseUrl: string): Promise<Client> {
  const client = new Client({ name: 'tollbooth-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', baseUrl)));
  return client;
}

/** A bare MCP `initialize` POST to `<baseUrl>/mcp` (a client accepting JSON or an event stream), as `fetch` answers it. */
export function postInitialize(baseUrl: string, clientName = 'tollbooth-test'): Promise<Response> {
  return fetch(`${baseUrl}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: clientName, version: '1' } },
    }),
  });
}

/** The built CLI (`npm run build` produces it; `npm test` builds first). */
/** The CLI as it ships (the bundle `npm run build` writes; `bin` in package.json): what users run is what is tested. */
export const CLI_PATH = fileURLToPath(new URL('../../dist/bin/cli.js', import.meta.url));

/** Spawns `tollbooth stdio` from the built CLI and connects the official MCP client to it. */
export async function connectStdioClient(
  env: Record<string, string>,
): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI_PATH, 'stdio'],
    env: { PATH: process.env.PATH ?? '', ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const client = new Client({ name: 'tollbooth-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

/**
 * What an HTTP challenge looks like on MCP, spelled out for comparisons: the resource is `mcp://tool/<name>` (v2
 * `resource.url`; v1 each entry's `resource`); everything else, every payment option included, is the same.
 */
export function asMcpChallenge<T>(challenge: T, tool: string): T {
  const c = challenge as {
    x402Version: number;
    resource?: Record<string, unknown>;
    accepts: Array<Record<string, unknown>>;
  };
  const url = `mcp://tool/${tool}`;
  if (c.x402Version === 2) return { ...c, resource: { ...c.resource, url } } as T;
  return { ...c, accepts: c.accepts.map((entry) => ({ ...entry, resource: url })) } as T;
}
