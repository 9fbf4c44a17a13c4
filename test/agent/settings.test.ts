import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import { generatePrivateKey } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BUDGET, DEFAULT_REMOTE_TIMEOUT_MS, loadAgentConfig } from '../../src/agent/settings.js';
import { ConfigError } from '../../src/config/config.js';
import { newSolanaKeypairBytes } from '../support/chain/solana-env.js';

const load = (env: Record<string, string>) => loadAgentConfig({ LOG_LEVEL: 'silent', ...env }).settings;

function failure(env: Record<string, string>): ConfigError {
  try {
    load(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('agent-side settings', () => {
  it('defaults to no remote, no wallet, ten cents a call and one dollar a day', () => {
    expect(load({})).toEqual({
      remote: {},
      timeoutMs: DEFAULT_REMOTE_TIMEOUT_MS,
      wallets: {},
      budget: { maxUsdPerCall: 0.1, maxUsdPerDay: 1 },
      preference: [],
      protocols: ['x402', 'mpp'],
      origins: { limits: {}, driftPercent: 10 },
      batch: { enabled: false },
    });
    expect(DEFAULT_BUDGET).toEqual({ maxUsdPerCall: 0.1, maxUsdPerDay: 1 });
  });

  it('pays on one network when BUDGET_NETWORKS is unset: the first of the table it holds a wallet for', () => {
    expect(load({ WALLET_EVM_PRIVATE_KEY: generatePrivateKey() }).budget.networks).toEqual(['eip155:8453']);
    expect(load({ WALLET_SOLANA_SECRET_KEY: JSON.stringify([...newSolanaKeypairBytes()]) }).budget.networks).toEqual([
      'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
    ]);
    expect(load({ WALLET_EVM_PRIVATE_KEY: generatePrivateKey(), BUDGET_NETWORKS: 'eip155:*' }).budget.networks).toEqual(
      ['eip155:*'],
    );
    expect(load({}).budget.networks).toBeUndefined();
  });

  it('pays x402 before MPP unless PAYMENT_PROTOCOLS says otherwise, and refuses an unknown protocol naming the variable', () => {
    expect(load({ PAYMENT_PROTOCOLS: 'mpp, x402' }).protocols).toEqual(['mpp', 'x402']);
    expect(load({ PAYMENT_PROTOCOLS: 'mpp' }).protocols).toEqual(['mpp']);
    expect(failure({ PAYMENT_PROTOCOLS: 'x402,lightning' }).message).toMatch(/PAYMENT_PROTOCOLS/);
    expect(failure({ PAYMENT_PROTOCOLS: 'x402,x402' }).message).toMatch(/PAYMENT_PROTOCOLS/);
  });

  it('gives every tool group REMOTE_URL unless the group has its own, without trailing slashes', () => {
    expect(load({ REMOTE_URL: 'https://remote.example/', REMOTE_URL_SMM: 'https://smm.example/x/' }).remote).toEqual({
      tools: 'https://remote.example',
      token: 'https://remote.example',
      smm: 'https://smm.example/x',
      transfers: 'https://remote.example',
    });
    expect(load({ REMOTE_URL_TOOLS: 'https://tools.example' }).remote).toEqual({ tools: 'https://tools.example' });
  });

  it('reads the budget, its allow-lists and the preference order', () => {
    const client = load({
      BUDGET_MAX_USD_PER_CALL: '0.25',
      BUDGET_MAX_USD_PER_DAY: '5',
      BUDGET_ASK_ABOVE_USD: '0.05',
      BUDGET_NETWORKS: 'eip155:8453, solana:*',
      BUDGET_TOOLS: 'annuity,geo-distance',
      PAYMENT_PREFERENCE: 'solana:*,eip155:8453',
      REMOTE_TIMEOUT_MS: '5000',
    });
    expect(client.budget).toEqual({
      maxUsdPerCall: 0.25,
      maxUsdPerDay: 5,
      askAboveUsd: 0.05,
      networks: ['eip155:8453', 'solana:*'],
      tools: ['annuity', 'geo-distance'],
    });
    expect(client.preference).toEqual(['solana:*', 'eip155:8453']);
    expect(client.timeoutMs).toBe(5000);
  });

  it('loads each wallet from the environment or from a <NAME>_FILE', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollbooth-wallet-'));
    try {
      const evm = generatePrivateKey();
      const solana = newSolanaKeypairBytes();
      const algorand = algosdk.generateAccount();
      writeFileSync(join(dir, 'solana.json'), JSON.stringify([...solana]));
      const client = load({
        WALLET_EVM_PRIVATE_KEY: evm,
        WALLET_SOLANA_SECRET_KEY_FILE: join(dir, 'solana.json'),
        WALLET_ALGORAND_MNEMONIC: algosdk.secretKeyToMnemonic(algorand.sk),
      });
      expect(client.wallets).toEqual({ evm, svm: solana, algorand: algorand.sk });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a malformed key naming the variable, never echoing the key', () => {
    const badSolana = failure({ WALLET_SOLANA_SECRET_KEY: '4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T' });
    expect(badSolana.message).toMatch(/WALLET_SOLANA_SECRET_KEY must be a 64-byte Solana keypair/);
    expect(badSolana.message).not.toContain('4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T');
    const words = 'abandon '.repeat(24) + 'zoo';
    const badAlgorand = failure({ WALLET_ALGORAND_MNEMONIC: words });
    expect(badAlgorand.message).toMatch(/WALLET_ALGORAND_MNEMONIC must be a 25-word Algorand account mnemonic/);
    expect(badAlgorand.message).not.toContain('abandon');
    const evmKey = '0x' + 'ab'.repeat(31);
    const badEvm = failure({ WALLET_EVM_PRIVATE_KEY: evmKey });
    expect(badEvm.message).toMatch(/WALLET_EVM_PRIVATE_KEY/);
    expect(badEvm.message).not.toContain('abab');
    expect(failure({ BUDGET_MAX_USD_PER_DAY: '-1' }).message).toMatch(/BUDGET_MAX_USD_PER_DAY/);
  });
});
