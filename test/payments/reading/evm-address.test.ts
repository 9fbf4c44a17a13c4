import { getAddress } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { checksumAddress } from '../../../src/payments/reading/evm-address.js';

describe('the EIP-55 checksum of an address', () => {
  it("is what viem's getAddress returns, from lower case, upper case or already checksummed", () => {
    const addresses = [
      '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
      '0x00000000000000000000000000000000DeaDBeef',
      ...Array.from({ length: 50 }, () => privateKeyToAddress(generatePrivateKey())),
    ];
    for (const address of addresses) {
      expect(checksumAddress(address.toLowerCase())).toBe(getAddress(address));
      expect(checksumAddress(`0x${address.slice(2).toUpperCase()}`)).toBe(getAddress(address));
      expect(checksumAddress(address)).toBe(getAddress(address));
    }
  });

  it('refuses anything that is not 0x and 40 hex digits', () => {
    for (const bad of ['', '0x', '0x123', `0x${'g'.repeat(40)}`, `${'a'.repeat(42)}`, `0x${'a'.repeat(41)}`])
      expect(() => checksumAddress(bad)).toThrow();
  });
});
