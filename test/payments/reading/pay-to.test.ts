import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/config.js';
import { BASE_MAINNET, DEFAULT_NETWORKS } from '../../../src/shared/networks.js';

const EVM = '0x1111111111111111111111111111111111111111';
const SOLANA = 'JAQ5MVHbCkSYRzXunsrNuM2m1LS859PGveHfoYPAmcvZ';
const STELLAR = 'GAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAWHF';
const ALGORAND = '737P57X6737P57X6737P57X6737P57X6737P57X6737P57X6737JO4454Y';
const FACILITATOR = 'http://127.0.0.1:9/facilitator';
const families = (config: ReturnType<typeof loadConfig>) => [...new Set(config.networks.map((n) => n.family))];

describe('placeholder pay-to addresses', () => {
  it('keep every family advertised while nothing can settle (a bare start shows prices)', () => {
    const config = loadConfig({});
    expect(families(config)).toEqual(['evm', 'svm', 'stellar', 'algorand']);
    expect(config.droppedFamilies).toEqual([]);
  });

  it('are dropped, family by family, once a facilitator could settle their payments', () => {
    const config = loadConfig({ FACILITATOR_URL: FACILITATOR, PAY_TO_EVM: EVM, PAY_TO_SOLANA: SOLANA });
    expect(families(config)).toEqual(['evm', 'svm']);
    expect(config.droppedFamilies).toEqual(['stellar', 'algorand']);
    expect(config.devPayTo).toEqual([]);
  });

  it('stay while only another family can settle', () => {
    const config = loadConfig({ FACILITATOR_URL_SOLANA: FACILITATOR, PAY_TO_SOLANA: SOLANA });
    expect(families(config)).toEqual(['evm', 'svm', 'stellar', 'algorand']);
    expect(config.devPayTo).toEqual(['evm', 'stellar', 'algorand']);
  });

  it('refuse the start when EVM payments could settle to the placeholder, naming the variable to set', () => {
    expect(() => loadConfig({ FACILITATOR_URL_EVM: FACILITATOR })).toThrow(ConfigError);
    expect(() => loadConfig({ FACILITATOR_URL_EVM: FACILITATOR })).toThrow(/Set PAY_TO_EVM/);
    expect(() => loadConfig({ FACILITATOR_EVM_PRIVATE_KEY: `0x${'11'.repeat(32)}` })).toThrow(/PAY_TO_EVM/);
  });

  it('are not demanded in production for families the network table does not sell', () => {
    const evmOnly = JSON.stringify({ replace: true, networks: DEFAULT_NETWORKS.filter((n) => n.id === BASE_MAINNET) });
    const config = loadConfig({
      NODE_ENV: 'production',
      PAY_TO_EVM: EVM,
      NETWORKS_JSON: evmOnly,
      FACILITATOR_URL: FACILITATOR,
    });
    expect(families(config)).toEqual(['evm']);
    expect(config.devPayTo).toEqual([]);
  });

  it('are refused in production for every family the table sells', () => {
    expect(() =>
      loadConfig({ NODE_ENV: 'production', PAY_TO_EVM: EVM, PAY_TO_SOLANA: SOLANA, PAY_TO_STELLAR: STELLAR }),
    ).toThrow(/set PAY_TO_ALGORAND\./);
    expect(
      loadConfig({
        NODE_ENV: 'production',
        PAY_TO_EVM: EVM,
        PAY_TO_SOLANA: SOLANA,
        PAY_TO_STELLAR: STELLAR,
        PAY_TO_ALGORAND: ALGORAND,
        FACILITATOR_URL: FACILITATOR,
      }).devPayTo,
    ).toEqual([]);
  });
});
