import { generateKeyPairSigner, getBase58Encoder } from '@solana/kit';
import { Keypair, StrKey } from '@stellar/stellar-sdk';
import algosdk from 'algosdk';
import { getAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/config.js';
import {
  algorandAddressProblem,
  evmAddressProblem,
  solanaAddressProblem,
  stellarAddressProblem,
} from '../../../src/payments/reading/address-format.js';

/** The same address with the case of its first letter digit flipped: a broken EIP-55 checksum. */
function flipFirstLetter(address: string): string {
  const i = address.slice(2).search(/[a-fA-F]/) + 2;
  const c = address[i]!;
  return address.slice(0, i) + (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()) + address.slice(i + 1);
}

/** The same base32 address with one character of its key part changed (its checksum no longer matches). */
function changeOneCharacter(address: string, at: number): string {
  const c = address[at]!;
  return address.slice(0, at) + (c === 'A' ? 'B' : 'A') + address.slice(at + 1);
}

describe('EVM pay-to addresses', () => {
  const checksummed = privateKeyToAccount(`0x${'42'.repeat(32)}`).address;

  it('accept the EIP-55 form viem makes, all lower case and all upper case', () => {
    expect(getAddress(checksummed)).toBe(checksummed);
    expect(evmAddressProblem(checksummed)).toBeUndefined();
    expect(evmAddressProblem(checksummed.toLowerCase())).toBeUndefined();
    expect(evmAddressProblem(`0x${checksummed.slice(2).toUpperCase()}`)).toBeUndefined();
  });

  it('refuse a mixed-case address whose checksum does not match, and the zero address', () => {
    expect(evmAddressProblem(flipFirstLetter(checksummed))).toMatch(/EIP-55 checksum/);
    expect(evmAddressProblem(`0x${'0'.repeat(40)}`)).toMatch(/zero address/);
    expect(evmAddressProblem('0x1234')).toMatch(/20-byte hex address/);
  });
});

describe('Solana pay-to addresses', () => {
  it('accept a public key made by @solana/kit', async () => {
    expect(solanaAddressProblem((await generateKeyPairSigner()).address)).toBeUndefined();
  });

  it('refuse base58 that does not decode to exactly 32 bytes, and characters outside base58', () => {
    // @solana/kit's own base58 codec says how many bytes each decodes to.
    const length = (text: string) => getBase58Encoder().encode(text).length;
    expect(length('z'.repeat(44))).toBe(33);
    expect(solanaAddressProblem('z'.repeat(44))).toMatch(/32 bytes.*got 33/);
    expect(solanaAddressProblem('2'.repeat(32))).toMatch(new RegExp(`32 bytes.*got ${length('2'.repeat(32))}$`));
    expect(solanaAddressProblem(`1${'2'.repeat(31)}`)).toMatch(/32 bytes/);
    expect(solanaAddressProblem('O'.repeat(44))).toMatch(/base58/);
  });
});

describe('Stellar pay-to addresses', () => {
  const account = Keypair.random().publicKey();

  it('accept an account id made by the Stellar SDK', () => {
    expect(stellarAddressProblem(account)).toBeUndefined();
  });

  it('refuse an account id whose CRC16 checksum does not match (the Stellar SDK refuses it too), and other StrKeys', () => {
    const altered = changeOneCharacter(account, 10);
    expect(StrKey.isValidEd25519PublicKey(altered)).toBe(false);
    expect(stellarAddressProblem(altered)).toMatch(/checksum/);
    expect(stellarAddressProblem(Keypair.random().secret())).toMatch(/G… account id/);
  });
});

describe('Algorand pay-to addresses', () => {
  const account = algosdk.generateAccount().addr.toString();

  it('accept an address made by algosdk', () => {
    expect(algorandAddressProblem(account)).toBeUndefined();
  });

  it('refuse an address whose SHA-512/256 checksum does not match (algosdk refuses it too)', () => {
    const altered = changeOneCharacter(account, 5);
    expect(algosdk.isValidAddress(altered)).toBe(false);
    expect(algorandAddressProblem(altered)).toMatch(/checksum/);
    expect(algorandAddressProblem('A'.repeat(57))).toMatch(/58-character/);
  });
});

describe('the configuration', () => {
  it('refuses every wrong address at once, naming each variable and what is wrong with it', async () => {
    const evm = privateKeyToAccount(`0x${'42'.repeat(32)}`).address;
    const attempt = () =>
      loadConfig({
        PAY_TO_EVM: flipFirstLetter(evm),
        PAY_TO_SOLANA: 'z'.repeat(44),
        PAY_TO_STELLAR: changeOneCharacter(Keypair.random().publicKey(), 10),
        PAY_TO_ALGORAND: changeOneCharacter(algosdk.generateAccount().addr.toString(), 5),
        FACILITATOR_EVM_ADDRESS: `0x${'0'.repeat(40)}`,
      });
    expect(attempt).toThrow(ConfigError);
    const message = (() => {
      try {
        attempt();
      } catch (err) {
        return (err as Error).message;
      }
      return '';
    })();
    expect(message).toMatch(/EIP-55 checksum[\s\S]*at PAY_TO_EVM/);
    expect(message).toMatch(/32 bytes[\s\S]*at PAY_TO_SOLANA/);
    expect(message).toMatch(/CRC16[\s\S]*at PAY_TO_STELLAR/);
    expect(message).toMatch(/SHA-512\/256[\s\S]*at PAY_TO_ALGORAND/);
    expect(message).toMatch(/zero address[\s\S]*at FACILITATOR_EVM_ADDRESS/);
  });

  it('takes well-formed addresses of every family', async () => {
    const config = loadConfig({
      PAY_TO_EVM: privateKeyToAccount(`0x${'42'.repeat(32)}`).address,
      PAY_TO_SOLANA: (await generateKeyPairSigner()).address,
      PAY_TO_STELLAR: Keypair.random().publicKey(),
      PAY_TO_ALGORAND: algosdk.generateAccount().addr.toString(),
    });
    expect(config.devPayTo).toEqual([]);
  });
});
