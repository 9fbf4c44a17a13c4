import { generateKeyPairSync } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import { Keypair } from '@stellar/stellar-sdk';
import algosdk from 'algosdk';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/config.js';
import { PAY_TO_ENV } from '../../support/pay-to.js';

function solanaKeypair(): { bytes: Uint8Array; address: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d ?? '', 'base64url');
  const pub = Buffer.from(publicKey.export({ format: 'jwk' }).x ?? '', 'base64url');
  const bytes = Uint8Array.from(Buffer.concat([seed, pub]));
  return { bytes, address: getBase58Decoder().decode(pub) };
}

describe('settlement keys from the environment', () => {
  it('reads a Solana keypair as a solana-keygen JSON array or as base58, and publishes its address as the fee payer', () => {
    const { bytes, address } = solanaKeypair();
    const fromJson = loadConfig({ FACILITATOR_SOLANA_SECRET_KEY: JSON.stringify([...bytes]) });
    expect(fromJson.signers.svm).toBe(address);
    const fromBase58 = loadConfig({ FACILITATOR_SOLANA_SECRET_KEY: getBase58Decoder().decode(bytes) });
    expect(fromBase58.signers.svm).toBe(address);
    expect(fromBase58.facilitator.keys.svm).toEqual(bytes);
  });

  it('refuses a Solana keypair whose public half does not match its secret, without echoing the key', () => {
    const { bytes } = solanaKeypair();
    const other = solanaKeypair().bytes;
    const forged = Uint8Array.from([...bytes.slice(0, 32), ...other.slice(32)]);
    const text = getBase58Decoder().decode(forged);
    expect(() => loadConfig({ FACILITATOR_SOLANA_SECRET_KEY: text })).toThrow(ConfigError);
    try {
      loadConfig({ FACILITATOR_SOLANA_SECRET_KEY: text });
    } catch (err) {
      expect((err as Error).message).toContain('FACILITATOR_SOLANA_SECRET_KEY');
      expect((err as Error).message).not.toContain(text);
    }
  });

  it('reads a Stellar seed and an Algorand mnemonic and derives their addresses', () => {
    const stellar = Keypair.random();
    const algo = algosdk.generateAccount();
    const config = loadConfig({
      FACILITATOR_STELLAR_SECRET: stellar.secret(),
      FACILITATOR_ALGORAND_MNEMONIC: algosdk.secretKeyToMnemonic(algo.sk),
    });
    expect(config.signers.stellar).toBe(stellar.publicKey());
    expect(config.signers.algorand).toBe(algo.addr.toString());
  });

  it('refuses a malformed Stellar seed or Algorand mnemonic with the variable named and the value withheld', () => {
    expect(() => loadConfig({ FACILITATOR_STELLAR_SECRET: 'SNOTAREALSEED' })).toThrow(
      /FACILITATOR_STELLAR_SECRET must be a Stellar secret seed/,
    );
    const words = 'abandon '.repeat(25).trim();
    try {
      loadConfig({ FACILITATOR_ALGORAND_MNEMONIC: words });
      expect.unreachable();
    } catch (err) {
      expect((err as Error).message).toContain('FACILITATOR_ALGORAND_MNEMONIC must be a 25-word');
      expect((err as Error).message).not.toContain('abandon');
    }
  });

  it('routes each family to its own remote facilitator URL, falling back to FACILITATOR_URL', () => {
    const config = loadConfig({
      ...PAY_TO_ENV,
      FACILITATOR_URL: 'https://shared.example/f',
      FACILITATOR_URL_SOLANA: 'https://sol.example/f',
    });
    expect(config.facilitator.urls).toEqual({
      evm: 'https://shared.example/f',
      svm: 'https://sol.example/f',
      stellar: 'https://shared.example/f',
      algorand: 'https://shared.example/f',
    });
  });
});
