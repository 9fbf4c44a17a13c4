import { describe, expect, it } from 'vitest';
import { ConfigError, DEV_PAY_TO, loadConfig } from '../src/config.js';

const realPayTo = {
  PAY_TO_EVM: '0x1111111111111111111111111111111111111111',
  PAY_TO_SOLANA: 'JAQ5MVHbCkSYRzXunsrNuM2m1LS859PGveHfoYPAmcvZ',
  PAY_TO_STELLAR: 'GAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAWHF',
  PAY_TO_ALGORAND: '737P57X6737P57X6737P57X6737P57X6737P57X6737P57X6737JO4454Y',
};

describe('configuration', () => {
  it('starts on embedded defaults with labelled development pay-to addresses', () => {
    const config = loadConfig({});
    expect(config.port).toBe(4021);
    expect(config.baseUrls.tools).toBe('http://localhost:4021');
    expect(config.payTo).toEqual(DEV_PAY_TO);
    expect(config.devPayTo).toEqual(['evm', 'svm', 'stellar', 'algorand']);
    expect(config.networks).toHaveLength(12);
  });

  it('refuses to start in production without real pay-to addresses, naming the missing variables', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', PAY_TO_EVM: realPayTo.PAY_TO_EVM })).toThrow(/PAY_TO_SOLANA, PAY_TO_STELLAR, PAY_TO_ALGORAND/);
    expect(loadConfig({ NODE_ENV: 'production', ...realPayTo }).devPayTo).toEqual([]);
  });

  it('lists every invalid value at once', () => {
    try {
      loadConfig({ PORT: 'abc', PAY_TO_EVM: '0x123', BASE_URL_TOOLS: 'not a url' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const message = (err as Error).message;
      expect(message).toMatch(/PORT/);
      expect(message).toMatch(/PAY_TO_EVM/);
      expect(message).toMatch(/BASE_URL_TOOLS/);
    }
  });

  it('reads a setting from <NAME>_FILE and ignores unrelated *_FILE variables', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const file = join(mkdtempSync(join(tmpdir(), 'tollbooth-cfg-')), 'key');
    writeFileSync(file, `0x${'ab'.repeat(32)}\n`);
    const config = loadConfig({ FACILITATOR_EVM_PRIVATE_KEY_FILE: file, SOME_TOOL_CONFIG_FILE: '/nonexistent' });
    expect(config.facilitator.keys.evm).toBe(`0x${'ab'.repeat(32)}`);
    expect(config.signers.evm).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(() => loadConfig({ FACILITATOR_EVM_PRIVATE_KEY_FILE: '/nonexistent/key' })).toThrow(ConfigError);
  });

  it('merges a custom network into the table and overrides fields of a known one', () => {
    const config = loadConfig({
      NETWORKS_JSON: JSON.stringify({
        networks: [
          { id: 'eip155:84532', family: 'evm', asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', decimals: 6, name: 'USDC', version: '2', rpcUrl: 'https://sepolia.base.org' },
          { id: 'eip155:8453', rpcUrl: 'http://127.0.0.1:8545' },
        ],
      }),
    });
    expect(config.networks).toHaveLength(13);
    expect(config.networks.find((n) => n.id === 'eip155:8453')?.rpcUrl).toBe('http://127.0.0.1:8545');
    expect(config.networks.find((n) => n.id === 'eip155:8453')?.schemes).toEqual(['exact', 'upto']);
    expect(config.networks.at(-1)?.id).toBe('eip155:84532');
  });

  it('rejects a network table entry with a clear message', () => {
    expect(() => loadConfig({ NETWORKS_JSON: JSON.stringify({ networks: [{ id: 'nocolon', family: 'evm' }] }) })).toThrow(/CAIP-2/);
    expect(() => loadConfig({ NETWORKS_JSON: '{not json' })).toThrow(ConfigError);
  });

  it('lets /mcp answer the hosts of the base URLs and MCP_ALLOWED_HOSTS', () => {
    const config = loadConfig({ BASE_URL_TOOLS: 'https://tools.example.com', MCP_ALLOWED_HOSTS: 'mcp.example.com, other.example.com' });
    expect(config.mcpAllowedHosts).toEqual(expect.arrayContaining(['localhost', '127.0.0.1', 'tools.example.com', 'mcp.example.com', 'other.example.com']));
  });
});
