import type { PaymentRequirements } from '@x402/core/types';
import { InMemoryClientChannelStorage } from '@x402/evm/batch-settlement/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { chooseOption, type ChoiceRules } from '../../src/agent/choose.js';
import { loadAgentConfig } from '../../src/agent/settings.js';
import { loadWallets } from '../../src/agent/wallets.js';
import { networkTable } from '../../src/shared/network-table.js';

const { networks } = networkTable({});
const USDC_BASE = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const payTo = privateKeyToAccount(generatePrivateKey()).address;
const entry = (scheme: string, amount = '1000'): PaymentRequirements =>
  ({
    scheme,
    network: 'eip155:8453',
    asset: USDC_BASE,
    amount,
    payTo,
    maxTimeoutSeconds: 60,
    extra: { name: 'USD Coin', version: '2', receiverAuthorizer: payTo, withdrawDelay: 900 },
  }) as PaymentRequirements;
const rules: ChoiceRules = { networks, preference: [], maxMicrosPerCall: 100_000 };
const batch = { storage: new InMemoryClientChannelStorage(), depositStrategy: () => undefined };

describe('choosing batch-settlement', () => {
  it('prefers a batch-settlement entry over exact at the same price when the agent pays with it', async () => {
    const wallets = await loadWallets({ evm: generatePrivateKey() }, networks, batch);
    const choice = chooseOption([entry('exact'), entry('batch-settlement')], 2, wallets, rules);
    expect(choice).toMatchObject({ type: 'chosen', chosen: { option: { scheme: 'batch-settlement' } } });
  });

  it('never prefers a dearer batch-settlement entry', async () => {
    const wallets = await loadWallets({ evm: generatePrivateKey() }, networks, batch);
    const choice = chooseOption([entry('batch-settlement', '2000'), entry('exact')], 2, wallets, rules);
    expect(choice).toMatchObject({ type: 'chosen', chosen: { option: { scheme: 'exact' } } });
  });

  it('leaves batch-settlement out as an unsupported scheme when the agent does not pay with it', async () => {
    const wallets = await loadWallets({ evm: generatePrivateKey() }, networks);
    const choice = chooseOption([entry('batch-settlement'), entry('exact')], 2, wallets, rules);
    expect(choice).toMatchObject({ type: 'chosen', chosen: { option: { scheme: 'exact' } } });
    expect(choice.options[0]).toMatchObject({ rejected: 'unsupported_scheme' });
  });

  it('reads AGENT_BATCH_SETTLEMENT (off unless on) and the deposit and idle-refund settings', () => {
    expect(loadAgentConfig({}).settings.batch).toEqual({ enabled: false });
    const on = loadAgentConfig({
      AGENT_BATCH_SETTLEMENT: 'on',
      AGENT_BATCH_DEPOSIT_USD: '0.5',
      AGENT_BATCH_IDLE_REFUND_MINUTES: '60',
    });
    expect(on.settings.batch).toEqual({ enabled: true, depositUsd: 0.5, idleRefundMinutes: 60 });
    expect(() => loadAgentConfig({ AGENT_BATCH_SETTLEMENT: 'yes' })).toThrow(/AGENT_BATCH_SETTLEMENT/);
  });
});
