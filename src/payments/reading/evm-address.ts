import { keccak_256 } from '@noble/hashes/sha3';

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * The EIP-55 mixed-case checksum form of a 20-byte hex address (what viem's `getAddress` returns; a test compares
 * them), without loading viem. Throws on anything that is not `0x` and 40 hex digits.
 */
export function checksumAddress(address: string): string {
  if (!HEX_ADDRESS.test(address)) throw new Error(`not a 20-byte hex address: ${address.slice(0, 50)}`);
  const lower = address.slice(2).toLowerCase();
  const hash = keccak_256(new TextEncoder().encode(lower));
  let out = '0x';
  for (let i = 0; i < 40; i += 1) {
    const nibble = (hash[i >> 1]! >> (i % 2 === 0 ? 4 : 0)) & 0x0f;
    out += nibble >= 8 ? lower[i]!.toUpperCase() : lower[i]!;
  }
  return out;
}
