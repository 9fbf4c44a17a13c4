import { describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../../src/agent/settings.js';
import { ConfigError, DEV_PAY_TO, loadConfig } from '../../src/config/config.js';

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
    expect(() => loadConfig({ NODE_ENV: 'production', PAY_TO_EVM: realPayTo.PAY_TO_EVM })).toThrow(
      /PAY_TO_SOLANA, PAY_TO_STELLAR, PAY_TO_ALGORAND/,
    );
    expect(
      loadConfig({ NODE_ENV: 'production', ...realPayTo, FACILITATOR_URL: 'http://127.0.0.1:9/facilitator' }).devPayTo,
    ).toEqual([]);
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
    const config = loadConfig({
      FACILITATOR_EVM_PRIVATE_KEY_FILE: file,
      PAY_TO_EVM: realPayTo.PAY_TO_EVM,
      SOME_TOOL_CONFIG_FILE: '/nonexistent',
    });
    expect(config.facilitator.keys.evm).toBe(`0x${'ab'.repeat(32)}`);
    expect(config.signers.evm).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(() => loadConfig({ FACILITATOR_EVM_PRIVATE_KEY_FILE: '/nonexistent/key' })).toThrow(ConfigError);
  });

  it('merges a custom network into the table and overrides fields of a known one', () => {
    const config = loadConfig({
      NETWORKS_JSON: JSON.stringify({
        networks: [
          {
            id: 'eip155:84532',
            family: 'evm',
            asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
            decimals: 6,
            name: 'USDC',
            version: '2',
            rpcUrl: 'https://sepolia.base.org',
          },
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
    expect(() =>
      loadConfig({ NETWORKS_JSON: JSON.stringify({ networks: [{ id: 'nocolon', family: 'evm' }] }) }),
    ).toThrow(/CAIP-2/);
    expect(() => loadConfig({ NETWORKS_JSON: '{not json' })).toThrow(ConfigError);
  });

  it('lets /mcp answer the hosts of the base URLs and MCP_ALLOWED_HOSTS', () => {
    const config = loadConfig({
      BASE_URL_TOOLS: 'https://tools.example.com',
      MCP_ALLOWED_HOSTS: 'mcp.example.com, other.example.com',
    });
    expect(config.mcpAllowedHosts).toEqual(
      expect.arrayContaining(['localhost', '127.0.0.1', 'tools.example.com', 'mcp.example.com', 'other.example.com']),
    );
  });
});

describe('the network set (TOLLBOOTH_NETWORK_SET)', () => {
  const testnet = { ...realPayTo, TOLLBOOTH_NETWORK_SET: 'testnet' };
  const publicFacilitator = 'https://x402.org/facilitator';

  it('is mainnet unless told otherwise, with no facilitator by default and no default budget networks', () => {
    const config = loadConfig({});
    expect(config.networkSet).toBe('mainnet');
    expect(config.facilitator.urls).toEqual({
      evm: undefined,
      svm: undefined,
      stellar: undefined,
      algorand: undefined,
    });
    expect(loadAgentConfig({}).settings.budget.networks).toBeUndefined();
    expect(config.chainTools.transfers.rpc.label).toBe('Base JSON-RPC');
  });

  it('refuses a set it does not know, naming the variable', () => {
    expect(() => loadConfig({ TOLLBOOTH_NETWORK_SET: 'devnet' })).toThrow(
      /must be mainnet or testnet[\s\S]*TOLLBOOTH_NETWORK_SET/,
    );
  });

  it('on the testnet set, Base and Solana go to the public x402.org facilitator when no FACILITATOR_URL* is set', () => {
    const config = loadConfig(testnet);
    expect(config.networkSet).toBe('testnet');
    expect(config.facilitator.urls).toEqual({
      evm: publicFacilitator,
      svm: publicFacilitator,
      stellar: undefined,
      algorand: undefined,
    });
  });

  it('leaves a family without its own pay-to address unsettled rather than paid to a placeholder (an agent needs no pay-to)', () => {
    const agent = loadConfig({ TOLLBOOTH_NETWORK_SET: 'testnet' });
    expect(agent.facilitator.urls).toEqual({ evm: undefined, svm: undefined, stellar: undefined, algorand: undefined });
    expect(agent.networks.map((n) => n.id)).toContain('eip155:84532');
    const evmOnly = loadConfig({ TOLLBOOTH_NETWORK_SET: 'testnet', PAY_TO_EVM: realPayTo.PAY_TO_EVM });
    expect(evmOnly.facilitator.urls).toEqual({
      evm: publicFacilitator,
      svm: undefined,
      stellar: undefined,
      algorand: undefined,
    });
  });

  it('an explicit FACILITATOR_URL or FACILITATOR_URL_<FAMILY> wins over the public facilitator', () => {
    const shared = loadConfig({ ...testnet, FACILITATOR_URL: 'http://127.0.0.1:7001' });
    expect(shared.facilitator.urls).toEqual({
      evm: 'http://127.0.0.1:7001',
      svm: 'http://127.0.0.1:7001',
      stellar: 'http://127.0.0.1:7001',
      algorand: 'http://127.0.0.1:7001',
    });
    const evmOnly = loadConfig({ ...testnet, FACILITATOR_URL_EVM: 'http://127.0.0.1:7002' });
    expect(evmOnly.facilitator.urls).toMatchObject({ evm: 'http://127.0.0.1:7002', svm: publicFacilitator });
  });

  it("lets the agent pay on the set's network it holds a wallet for (Base Sepolia for an EVM key) unless BUDGET_NETWORKS says otherwise", () => {
    const wallet = { WALLET_EVM_PRIVATE_KEY: `0x${'cd'.repeat(32)}` };
    expect(loadAgentConfig({ ...testnet, ...wallet }).settings.budget.networks).toEqual(['eip155:84532']);
    expect(loadAgentConfig({ ...wallet }).settings.budget.networks).toEqual(['eip155:8453']);
    expect(
      loadAgentConfig({ ...testnet, ...wallet, BUDGET_NETWORKS: 'eip155:84532,solana:*' }).settings.budget.networks,
    ).toEqual(['eip155:84532', 'solana:*']);
  });

  it('merges NETWORKS_JSON onto the testnet table, and transfers-evm reads Base Sepolia', () => {
    const config = loadConfig({
      ...testnet,
      NETWORKS_JSON: JSON.stringify({ networks: [{ id: 'eip155:84532', rpcUrl: 'http://127.0.0.1:8545' }] }),
    });
    expect(config.networks).toHaveLength(4);
    expect(config.networks[0]).toMatchObject({
      id: 'eip155:84532',
      asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
      rpcUrl: 'http://127.0.0.1:8545',
    });
    expect(config.chainTools.transfers.rpc).toEqual({ url: 'http://127.0.0.1:8545', label: 'Base Sepolia JSON-RPC' });
    const indexed = loadConfig({ ...testnet, ALCHEMY_API_KEY: 'test-key' });
    expect(indexed.chainTools.transfers.indexer?.settings.baseUrl).toBe('https://base-sepolia.g.alchemy.com/v2');
  });

  it('refuses a replaced table without Base or Base Sepolia at start-up, saying why', () => {
    const algorandOnly = {
      id: 'algorand:SGO1GKSzyE7IEPItTxCByw9x8FmnrCDexi9/cOUJOiI=',
      family: 'algorand',
      asset: '10458941',
      decimals: 6,
    };
    expect(() => loadConfig({ NETWORKS_JSON: JSON.stringify({ replace: true, networks: [algorandOnly] }) })).toThrow(
      /NETWORKS_JSON[\s\S]*token-report, smm-order and transfers-evm/,
    );
  });
});
