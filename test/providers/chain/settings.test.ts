import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/config.js';
import { PUBLIC_RPC_URLS } from '../../../src/providers/chain/settings.js';
import { cdpJwt, parseCdpSecret } from '../../../src/providers/chain/cdp-auth.js';
import { cdpTestKey } from '../../support/upstreams/cdp-faucet.js';

const KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const load = (env: Record<string, string>) => loadConfig({ LOG_LEVEL: 'silent', ...env }).chainTools;
const failure = (env: Record<string, string>) => {
  try {
    load(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a configuration error');
};

describe('chain-tool settings', () => {
  it('defaults to the public RPCs, the self-hosted faucet without keys, and a 2,000-block log chunk', () => {
    const s = load({});
    expect(s.rpcUrls).toEqual({ ...PUBLIC_RPC_URLS, base: 'https://mainnet.base.org' });
    expect(s.faucet).toMatchObject({ provider: 'self-hosted', evmKey: undefined, solanaKey: undefined });
    expect(s.cdp.credentials).toBeUndefined();
    expect(s.transfers).toMatchObject({ chunkBlocks: 2_000, maxBlocks: 50_000, indexer: undefined });
    expect(s.cdp.faucet.retries).toBe(0);
  });

  it('takes an RPC URL from RPC_URLS first, then from the network table entry of the same chain', () => {
    const s = load({
      RPC_URLS: JSON.stringify({ 'base-sepolia': 'http://127.0.0.1:8545' }),
      NETWORKS_JSON: JSON.stringify({ networks: [{ id: 'eip155:8453', rpcUrl: 'https://base.example.org' }] }),
    });
    expect(s.rpcUrls['base-sepolia']).toBe('http://127.0.0.1:8545');
    expect(s.rpcUrls.base).toBe('https://base.example.org');
    expect(failure({ RPC_URLS: JSON.stringify({ mainnet: 'http://x' }) })).toMatch(/RPC_URLS/);
    expect(failure({ RPC_URLS: 'not json' })).toMatch(/RPC_URLS must be a JSON object/);
  });

  it('uses the hosted faucet when a CDP key is set, and refuses half a key or a cdp provider without one', () => {
    const key = cdpTestKey('ec');
    expect(load({ CDP_API_KEY_ID: key.keyId, CDP_API_KEY_SECRET: key.secret }).faucet.provider).toBe('cdp');
    expect(
      load({ CDP_API_KEY_ID: key.keyId, CDP_API_KEY_SECRET: key.secret, FAUCET_PROVIDER: 'self-hosted' }).faucet
        .provider,
    ).toBe('self-hosted');
    expect(failure({ CDP_API_KEY_ID: key.keyId })).toMatch(/set together/);
    expect(failure({ FAUCET_PROVIDER: 'cdp' })).toMatch(/needs CDP_API_KEY_ID/);
  });

  it('names a bad key variable without ever echoing the key', () => {
    const secret = 'not-a-key-but-secret-looking-value-1234567890';
    const message = failure({ CDP_API_KEY_ID: 'id', CDP_API_KEY_SECRET: secret });
    expect(message).toMatch(/CDP_API_KEY_SECRET/);
    expect(message).not.toContain(secret);
    const solana = failure({ FAUCET_SOLANA_SECRET_KEY: '4'.repeat(87) });
    expect(solana).toMatch(/FAUCET_SOLANA_SECRET_KEY/);
    expect(solana).not.toContain('4'.repeat(20));
    expect(failure({ FAUCET_EVM_PRIVATE_KEY: '0x1234' })).toMatch(/FAUCET_EVM_PRIVATE_KEY/);
  });

  it('reads keys from <NAME>_FILE', () => {
    const dir = mkdtempSync(join(tmpdir(), 'chain-settings-'));
    writeFileSync(join(dir, 'key'), KEY + '\n');
    writeFileSync(join(dir, 'alchemy'), 'alchemy-key\n');
    const s = load({ FAUCET_EVM_PRIVATE_KEY_FILE: join(dir, 'key'), ALCHEMY_API_KEY_FILE: join(dir, 'alchemy') });
    expect(s.faucet.evmKey).toBe(KEY);
    expect(s.transfers.indexer?.apiKey).toBe('alchemy-key');
    expect(s.transfers.indexer?.settings.baseUrl).toBe('https://base-mainnet.g.alchemy.com/v2');
  });

  it('signs CDP JWTs that name the request, for EC and Ed25519 keys', () => {
    for (const kind of ['ec', 'ed25519'] as const) {
      const key = cdpTestKey(kind);
      const jwt = cdpJwt(
        { keyId: key.keyId, key: parseCdpSecret(key.secret) },
        'POST',
        'https://api.cdp.coinbase.com/platform/v2/evm/faucet',
        1_000,
      );
      const [header, claims] = jwt
        .split('.')
        .slice(0, 2)
        .map((p) => JSON.parse(Buffer.from(p!, 'base64url').toString()) as Record<string, unknown>);
      expect(header).toMatchObject({ alg: kind === 'ec' ? 'ES256' : 'EdDSA', kid: key.keyId, typ: 'JWT' });
      expect(claims).toEqual({
        iss: 'cdp',
        sub: key.keyId,
        // Issued-at, as Coinbase's own SDK sets it.
        iat: 1_000,
        nbf: 1_000,
        exp: 1_120,
        uris: ['POST api.cdp.coinbase.com/platform/v2/evm/faucet'],
      });
    }
  });
});
