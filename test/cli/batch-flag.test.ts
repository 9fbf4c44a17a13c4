import { describe, expect, it } from 'vitest';
import { batchSettlementSettings, serveSwitchSettings } from '../../src/cli/batch-flag.js';
import type { CommandArgs } from '../../src/cli/command.js';

const args = (values: Record<string, boolean>) => ({ values, positionals: [] }) as unknown as CommandArgs;

describe('the --batch-settlement flag', () => {
  it('stands for BATCH_SETTLEMENT=on, and for nothing when absent', () => {
    expect(batchSettlementSettings(args({ 'batch-settlement': true }))).toEqual({ BATCH_SETTLEMENT: 'on' });
    expect(batchSettlementSettings(args({}))).toEqual({});
  });

  it('is one of the switches of serve, beside --testnet', () => {
    expect(serveSwitchSettings(args({ 'batch-settlement': true, testnet: true }))).toEqual({
      BATCH_SETTLEMENT: 'on',
      TOLLBOOTH_NETWORK_SET: 'testnet',
    });
  });
});
