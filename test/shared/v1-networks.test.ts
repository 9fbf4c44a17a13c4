import { EVM_NETWORK_CHAIN_ID_MAP } from '@x402/evm/v1';
import { V1_TO_V2_NETWORK_MAP } from '@x402/svm';
import { describe, expect, it } from 'vitest';
import { canonicalNetwork } from '../../src/agent/networks.js';
import { canonicalNetworkId } from '../../src/payments/reading/match.js';
import { V1_EVM_CHAIN_IDS, v1NetworkId } from '../../src/shared/v1-networks.js';

describe('the x402 version-1 network names', () => {
  it('are those of @x402/evm/v1, with the same chain ids', () => {
    expect(V1_EVM_CHAIN_IDS).toEqual(EVM_NETWORK_CHAIN_ID_MAP);
  });

  it('are those of @x402/svm for Solana, with the same CAIP-2 ids', () => {
    for (const [name, id] of Object.entries(V1_TO_V2_NETWORK_MAP)) expect(v1NetworkId(name)).toBe(id);
  });

  it('map to CAIP-2 ids on the selling side; unknown names, and names of Object.prototype, pass through', () => {
    expect(canonicalNetworkId('base')).toBe('eip155:8453');
    expect(canonicalNetworkId('eip155:137')).toBe('eip155:137');
    expect(canonicalNetworkId('toString')).toBe('toString');
    expect(canonicalNetworkId('nowhere')).toBe('nowhere');
  });

  it('map to CAIP-2 ids on the paying side, Solana names too; unknown names, and names of Object.prototype, pass through', () => {
    expect(canonicalNetwork('base-sepolia')).toBe('eip155:84532');
    expect(canonicalNetwork('solana-devnet')).toBe(V1_TO_V2_NETWORK_MAP['solana-devnet']);
    expect(canonicalNetwork('solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp')).toBe('solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp');
    for (const name of ['toString', 'constructor', '__proto__', 'nowhere']) expect(canonicalNetwork(name)).toBe(name);
    expect(v1NetworkId('hasOwnProperty')).toBeUndefined();
  });
});
