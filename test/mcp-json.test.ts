import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatePrivateKey } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH } from './support/mcp.js';
import { startTestServer, type TestServer } from './support/server.js';

interface Entry {
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  type?: string;
  url?: string;
}
const shipped = JSON.parse(readFileSync(fileURLToPath(new URL('../mcp.json', import.meta.url)), 'utf8')) as {
  mcpServers: Record<string, Entry>;
};
const names = Object.keys(shipped.mcpServers);
const dir = mkdtempSync(join(tmpdir(), 'tollbooth-mcp-json-'));
// Remote mode lists what the remote publishes: the shipped example deployment stands for this local one.
let deployment: TestServer;
beforeAll(async () => {
  deployment = await startTestServer();
}, 60_000);
afterAll(async () => {
  await deployment?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The entry as a user fills it in: only the `/absolute/path/to/…` placeholders are replaced (the clone, data dirs, the key file). */
function filledIn(entry: Entry): Entry {
  const keyFile = join(dir, 'evm.key');
  writeFileSync(keyFile, `${generatePrivateKey()}\n`, { mode: 0o600 });
  const fill = (value: string) =>
    value
      .replace('/absolute/path/to/tollbooth/dist/bin/cli.js', CLI_PATH)
      .replace('/absolute/path/to/evm.key', keyFile)
      .replace('https://tollbooth.example.com', deployment.url)
      .replace(/^\/absolute\/path\/to\/.*$/, (path) => join(dir, path.replace(/\W+/g, '-')));
  return {
    ...entry,
    args: entry.args?.map(fill),
    env: Object.fromEntries(Object.entries(entry.env ?? {}).map(([k, v]) => [k, fill(v)])),
  };
}

describe('mcp.json as shipped', () => {
  it('leads with the paying remote entry for agent users, capped to one network', () => {
    const first = shipped.mcpServers[names[0]!]!;
    expect(first.args).toEqual(expect.arrayContaining(['stdio', '--remote']));
    expect(first.env).toMatchObject({
      WALLET_EVM_PRIVATE_KEY_FILE: expect.any(String),
      BUDGET_NETWORKS: 'eip155:8453',
    });
  });

  it('holds no placeholder settings other than paths to fill in', () => {
    for (const entry of Object.values(shipped.mcpServers)) {
      for (const [name, value] of Object.entries(entry.env ?? {})) {
        expect(`${name}=${value}`).not.toMatch(/your|example|PAY_TO_/i);
      }
    }
  });

  for (const name of names.filter((n) => shipped.mcpServers[n]!.command === 'node')) {
    it(`starts the "${name}" entry and lists the tools`, async () => {
      const entry = filledIn(shipped.mcpServers[name]!);
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: entry.args!,
        env: { PATH: process.env.PATH ?? '', ...entry.env },
        stderr: 'pipe',
      });
      const client = new Client({ name: 'mcp-json-test', version: '1.0.0' });
      await client.connect(transport);
      try {
        const { tools } = await client.listTools();
        expect(tools.length).toBeGreaterThanOrEqual(16);
      } finally {
        await client.close();
      }
    });
  }
});
