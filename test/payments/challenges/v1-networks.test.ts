import { EVM_NETWORK_CHAIN_ID_MAP } from '@x402/evm/v1';
import { describe, expect, it } from 'vitest';
import { canonicalNetworkId } from '../../../src/payments/reading/match.js';
import { V1_EVM_CHAIN_IDS } from '../../../src/payments/challenges/v1-networks.js';

describe('the x402 version-1 EVM network names', () => {
  it('are those of @x402/evm/v1, with the same chain ids', () => {
    expect(V1_EVM_CHAIN_IDS).toEqual(EVM_NETWORK_CHAIN_ID_MAP);
  });

  it('map to CAIP-2 ids; unknown names, and names of Object.prototype, pass through', () => {
    expect(canonicalNetworkId('base')).toBe('eip155:8453');
    expect(canonicalNetworkId('eip155:137')).toBe('eip155:137');
    expect(canonicalNetworkId('toString')).toBe('toString');
    expect(canonicalNetworkId('nowhere')).toBe('nowhere');
  });
});
