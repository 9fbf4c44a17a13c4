import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CLI_PATH } from './support/mcp.js';

const run = promisify(execFile);

describe('tollbooth mcp-config', () => {
  it('prints stdio, streamable-HTTP and remote paying entries for this install, with the budget but no key', async () => {
    const env = {
      PATH: process.env.PATH ?? '',
      DATA_DIR: '/srv/tollbooth-data',
      REMOTE_URL: 'https://tools.example.com',
      BUDGET_MAX_USD_PER_DAY: '2',
      BUDGET_ASK_ABOVE_USD: '0.02',
    };
    const { stdout } = await run(process.execPath, [CLI_PATH, 'mcp-config'], { env });
    const { mcpServers } = JSON.parse(stdout) as {
      mcpServers: Record<string, { command?: string; args?: string[]; env?: Record<string, string>; url?: string }>;
    };
    expect(mcpServers.tollbooth).toMatchObject({
      command: process.execPath,
      args: [CLI_PATH, 'stdio'],
      env: { DATA_DIR: '/srv/tollbooth-data' },
    });
    expect(mcpServers['tollbooth-http']).toEqual({ type: 'http', url: 'http://localhost:4021/mcp' });
    expect(mcpServers['tollbooth-remote']).toMatchObject({
      args: [CLI_PATH, 'stdio', '--remote', 'https://tools.example.com'],
      env: {
        BUDGET_MAX_USD_PER_CALL: '0.1',
        BUDGET_MAX_USD_PER_DAY: '2',
        BUDGET_ASK_ABOVE_USD: '0.02',
        WALLET_EVM_PRIVATE_KEY_FILE: expect.any(String),
      },
    });
    expect(stdout).not.toMatch(/0x[0-9a-f]{64}/i);
  });

  it('leads with the paying remote entry, capped to one network', async () => {
    const env = { PATH: process.env.PATH ?? '', REMOTE_URL: 'https://tools.example.com' };
    const { stdout } = await run(process.execPath, [CLI_PATH, 'mcp-config'], { env });
    const { mcpServers } = JSON.parse(stdout) as { mcpServers: Record<string, { env?: Record<string, string> }> };
    expect(Object.keys(mcpServers)[0]).toBe('tollbooth-remote');
    expect(mcpServers['tollbooth-remote']!.env).toMatchObject({ BUDGET_NETWORKS: 'eip155:8453' });
  });
});
