/**
 * Checks of the addresses an operator configures (PAY_TO_*, FACILITATOR_EVM_ADDRESS, the fee payers), one per network
 * family, each answering why an address is wrong (or undefined when it is right): EVM with its EIP-55 checksum when
 * written in mixed case and never the zero address, Solana as base58 of exactly 32 bytes, Stellar as a `G…` StrKey
 * with its CRC16 checksum, Algorand as base32 with its SHA-512/256 checksum. Light: no chain SDK is loaded.
 */
import { sha512_256 } from '@noble/hashes/sha2';
import { checksumAddress } from './evm-address.js';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** Decodes base58 (Bitcoin alphabet); undefined when a character is not in it. */
function base58Decode(text: string): Uint8Array | undefined {
  let value = 0n;
  for (const char of text) {
    const digit = BASE58.indexOf(char);
    if (digit < 0) return undefined;
    value = value * 58n + BigInt(digit);
  }
  const bytes: number[] = [];
  for (; value > 0n; value >>= 8n) bytes.unshift(Number(value & 0xffn));
  const zeros = text.length - text.replace(/^1+/, '').length;
  return Uint8Array.from([...new Array<number>(zeros).fill(0), ...bytes]);
}

/** Decodes unpadded RFC 4648 base32; undefined when a character is not in the alphabet or the spare bits are not 0. */
function base32Decode(text: string): Uint8Array | undefined {
  const bytes: number[] = [];
  let buffer = 0;
  let bits = 0;
  for (const char of text) {
    const digit = BASE32.indexOf(char);
    if (digit < 0) return undefined;
    buffer = ((buffer << 5) | digit) & 0xfff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((buffer >> bits) & 0xff);
    }
  }
  if ((buffer & ((1 << bits) - 1)) !== 0) return undefined;
  return Uint8Array.from(bytes);
}

/** CRC16-XModem (polynomial 0x1021, initial 0), the checksum of Stellar's StrKey. */
function crc16Xmodem(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** Why an EVM address is wrong: not 0x and 40 hex digits, the zero address, or a mixed-case one failing EIP-55. */
export function evmAddressProblem(address: string): string | undefined {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return 'must be a 0x-prefixed 20-byte hex address';
  if (/^0x0{40}$/.test(address)) return 'must not be the zero address (payments sent there are lost)';
  const digits = address.slice(2);
  const mixed = digits !== digits.toLowerCase() && digits !== digits.toUpperCase();
  if (mixed && checksumAddress(address) !== address) {
    return 'has a wrong EIP-55 checksum (its mixed case does not match): check it for a typo, or write it all in lower case';
  }
  return undefined;
}

/** Why a Solana address is wrong: not base58, or not exactly 32 bytes once decoded. */
export function solanaAddressProblem(address: string): string | undefined {
  const bytes = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(address) ? base58Decode(address) : undefined;
  if (!bytes) return 'must be a base58 Solana address';
  if (bytes.length !== 32) return `must decode to 32 bytes (a Solana public key), got ${bytes.length}`;
  return undefined;
}

/** Why a Stellar account id is wrong: not a `G…` StrKey of 56 characters, or a wrong CRC16 checksum. */
export function stellarAddressProblem(address: string): string | undefined {
  const bytes = /^G[A-Z2-7]{55}$/.test(address) ? base32Decode(address) : undefined;
  if (!bytes || bytes.length !== 35 || bytes[0] !== 6 << 3) return 'must be a Stellar G… account id';
  const crc = crc16Xmodem(bytes.subarray(0, 33));
  if (bytes[33] !== (crc & 0xff) || bytes[34] !== crc >> 8) {
    return 'has a wrong checksum (a Stellar account id ends with a CRC16 of its key): check it for a typo';
  }
  return undefined;
}

/** Why an Algorand address is wrong: not 58 base32 characters, or a wrong SHA-512/256 checksum. */
export function algorandAddressProblem(address: string): string | undefined {
  const bytes = /^[A-Z2-7]{58}$/.test(address) ? base32Decode(address) : undefined;
  if (!bytes || bytes.length !== 36) return 'must be a 58-character Algorand address';
  const expected = sha512_256(bytes.subarray(0, 32)).subarray(28);
  if (!expected.every((byte, i) => bytes[32 + i] === byte)) {
    return 'has a wrong checksum (an Algorand address ends with 4 bytes of the SHA-512/256 of its key): check it for a typo';
  }
  return undefined;
}
