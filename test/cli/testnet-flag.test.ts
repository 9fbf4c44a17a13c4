import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { TESTNET_NETWORKS } from '../../src/shared/network-sets.js';
import { DEFAULT_NETWORKS } from '../../src/shared/networks.js';
import { CLI_PATH } from '../support/mcp.js';
import { decodeHeader } from '../support/server.js';
import { spawnServe, spawnStdio } from '../support/spawn.js';

const run = promisify(execFile);
const env = { PATH: process.env.PATH ?? '' };
const TESTNET_IDS = TESTNET_NETWORKS.map((n) => n.id);

describe('--testnet on tollbooth serve and tollbooth stdio', () => {
  it('is described by the --help of both commands', async () => {
    for (const command of ['serve', 'stdio']) {
      const { stdout } = await run(process.execPath, [CLI_PATH, command, '--help'], { env });
      expect(stdout, command).toMatch(/--testnet\s+advertise the testnet twins/);
      expect(stdout, command).toMatch(/TOLLBOOTH_NETWORK_SET=testnet/);
    }
  });

  it('serve --testnet says on its startup line that the testnet set is live, and its challenges name only testnets', async () => {
    const server = await spawnServe({ LOG_LEVEL: 'info' }, ['--testnet']);
    try {
      const line = await server.logged('tollbooth listening');
      expect(line).toMatchObject({ networkSet: 'testnet', networks: TESTNET_IDS });
      const res = await fetch(`${server.url}/api/annuity`, { method: 'POST' });
      expect(res.status).toBe(402);
      const challenge = decodeHeader(res.headers.get('PAYMENT-REQUIRED')) as { accepts: Array<{ network: string }> };
      expect(challenge.accepts.map((a) => a.network)).toEqual(TESTNET_IDS);
    } finally {
      await server.stop();
    }
  });

  it('serve without it says the mainnet set is live', async () => {
    const server = await spawnServe({ LOG_LEVEL: 'info' });
    try {
      expect(await server.logged('tollbooth listening')).toMatchObject({
        networkSet: 'mainnet',
        networks: DEFAULT_NETWORKS.map((n) => n.id),
      });
    } finally {
      await server.stop();
    }
  });

  it('stdio --testnet serves the tools with testnet challenges and says so on its ready line', async () => {
    const stdio = await spawnStdio({ LOG_LEVEL: 'info' }, ['--testnet']);
    try {
      const result = await stdio.client.callTool({
        name: 'annuity',
        arguments: { payment: 100, ratePerPeriod: 0.05, periods: 10 },
      });
      expect(result.isError).toBe(true);
      const accepts = (result.structuredContent as { accepts: Array<{ network: string }> }).accepts;
      expect(accepts.map((a) => a.network)).toEqual(TESTNET_IDS);
      const ready = stdio
        .stderr()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.msg === 'tollbooth MCP stdio ready');
      expect(ready).toMatchObject({ networkSet: 'testnet', networks: TESTNET_IDS });
    } finally {
      await stdio.stop();
    }
  });

  it('is refused by commands that do not take it (strict options)', async () => {
    const failed = await run(process.execPath, [CLI_PATH, 'receipts', '--testnet'], { env }).catch(
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed).toMatchObject({ code: 2, stderr: expect.stringMatching(/--testnet/) });
  });
});
