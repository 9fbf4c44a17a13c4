import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { getBase58Decoder } from '@solana/kit';
import { Keypair, StrKey } from '@stellar/stellar-sdk';
import algosdk from 'algosdk';
import { generatePrivateKey } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentDataDir, runCli } from '../support/agent.js';
import { baseSepoliaEntry } from '../support/chain/token.js';

const RPC_KEY = 'rpc-provider-api-key-0123456789';
const REMOTE_TOKEN = 'remote-access-token-abcdef012345';
const EVM_KEY = generatePrivateKey();
const evmBytes = Buffer.from(EVM_KEY.slice(2), 'hex');
/** A Solana keypair: 32 seed bytes, then the public key. */
const solanaKey = (() => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const d = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
  const x = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return Uint8Array.from(Buffer.concat([d, x]));
})();
const SOLANA = getBase58Decoder().decode(solanaKey);
const STELLAR = Keypair.random().secret();
const stellarSeed = Buffer.from(StrKey.decodeEd25519SecretSeed(STELLAR));
const algorand = algosdk.generateAccount();
const MNEMONIC = algosdk.secretKeyToMnemonic(algorand.sk);

/** Every form of the configured keys a seller, a library or a log line could echo. */
const FORMS: Record<string, string> = {
  'EVM key': EVM_KEY,
  'EVM key without 0x': EVM_KEY.slice(2),
  'EVM key as base64': evmBytes.toString('base64'),
  'Solana key (base58)': SOLANA,
  'Solana key as a JSON byte array': JSON.stringify(Array.from(solanaKey)),
  'Solana seed as hex': Buffer.from(solanaKey.slice(0, 32)).toString('hex'),
  'Stellar secret': STELLAR,
  'Stellar seed as base64': stellarSeed.toString('base64'),
  'Algorand mnemonic': MNEMONIC,
  'Algorand mnemonic, spaced otherwise': MNEMONIC.split(' ').join('  '),
  'Algorand secret key as base64': Buffer.from(algorand.sk).toString('base64'),
  'RPC API key': RPC_KEY,
  'remote token': REMOTE_TOKEN,
  'remote token URL-encoded in base64': Buffer.from(REMOTE_TOKEN).toString('base64'),
};

/** A look-alike seller and remote that fails every request with a body echoing every form of the agent's secrets. */
let lookalike: Server;
let url: string;
const dirs: string[] = [];
beforeAll(async () => {
  lookalike = createServer((_req, res) => {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'internal', echoed: FORMS }));
  });
  await new Promise<void>((resolve) => lookalike.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(lookalike.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => lookalike?.close(resolve));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The agent's environment: every kind of wallet key, an RPC URL and a remote URL with credentials, debug logs. */
function env(): Record<string, string> {
  const dir = agentDataDir();
  dirs.push(dir);
  const network = baseSepoliaEntry(`${url}/v3/${RPC_KEY}`, 'a look-alike RPC');
  return {
    DATA_DIR: dir,
    LOG_LEVEL: 'info',
    NETWORKS_JSON: JSON.stringify({ networks: [network] }),
    BUDGET_NETWORKS: 'eip155:84532',
    WALLET_EVM_PRIVATE_KEY: EVM_KEY,
    WALLET_SOLANA_SECRET_KEY: SOLANA,
    WALLET_STELLAR_SECRET: STELLAR,
    WALLET_ALGORAND_MNEMONIC: MNEMONIC,
    REMOTE_URL: `${url}/?token=${REMOTE_TOKEN}`,
  };
}

/** The forms of a secret found in `text` (each by its first 8 characters: the redactor blanks any such prefix). */
function leaked(text: string): string[] {
  return Object.entries(FORMS)
    .filter(
      ([, form]) => text.includes(form.slice(0, 8)) || text.toLowerCase().includes(form.slice(0, 8).toLowerCase()),
    )
    .map(([label]) => label);
}

describe("the agent's command line never shows its secrets", () => {
  it('`tollbooth fetch` prints a seller error echoing every key form with each form blanked', async () => {
    const run = await runCli(['fetch', `${url}/quote`], env());
    expect(run.stderr).toContain('remote answered');
    expect(run.stdout).toContain('[redacted]');
    expect(run.stdout).toContain('"error": "internal"');
    expect(leaked(run.stdout)).toEqual([]);
    expect(leaked(run.stderr)).toEqual([]);
  });

  it('`tollbooth call` logs a failing remote (its URL carries a token) without any form of a secret', async () => {
    const run = await runCli(['call', 'no-such-tool'], env());
    expect(run.stderr).toContain('remote: no tool source answered');
    expect(run.stderr).toContain('[redacted]');
    expect(leaked(run.stdout)).toEqual([]);
    expect(leaked(run.stderr)).toEqual([]);
  });
});
