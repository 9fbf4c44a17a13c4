import { createKeyPairSignerFromBytes } from '@solana/kit';
import type { PaymentRequirements } from '@x402/core/types';
import { Keypair } from '@stellar/stellar-sdk';
import algosdk from 'algosdk';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { loadWallets } from '../../src/agent/wallets.js';
import { loadConfig } from '../../src/config/config.js';
import { buildChallenge } from '../../src/payments/challenges/requirements.js';
import { annuity } from '../../tools/annuity.js';
import { newSolanaKeypairBytes } from '../support/chain/solana-env.js';

const config = loadConfig({ LOG_LEVEL: 'silent' });
const challenge = buildChallenge(config, annuity);
const entry = (network: string, scheme = 'exact') =>
  (challenge.accepts as PaymentRequirements[]).find((a) => a.network === network && a.scheme === scheme)!;

describe("the agent's wallets", () => {
  it('derives the address of each key it is given and pays the options of every family, Stellar exact included', async () => {
    const evm = generatePrivateKey();
    const solana = newSolanaKeypairBytes();
    const algorand = algosdk.generateAccount();
    const stellar = Keypair.random();
    const wallets = await loadWallets(
      { evm, svm: solana, algorand: algorand.sk, stellar: stellar.secret() },
      config.networks,
    );
    expect(wallets.addresses).toEqual({
      evm: privateKeyToAccount(evm).address,
      svm: (await createKeyPairSignerFromBytes(solana)).address,
      algorand: algorand.addr.toString(),
      stellar: stellar.publicKey(),
    });
    expect(wallets.unpayable(entry('stellar:pubnet'), 2)).toBeUndefined();
    expect(wallets.unpayable(entry('eip155:8453', 'upto'), 2)).toBeUndefined();
    expect(wallets.unpayable(entry('solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp'), 2)).toBeUndefined();
  });

  it('says which options it cannot pay: no wallet for the family, or a scheme and version it does not sign', async () => {
    const wallets = await loadWallets({ evm: generatePrivateKey() }, config.networks);
    expect(wallets.unpayable(entry('solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp'), 2)).toBe('no_wallet');
    expect(wallets.unpayable({ ...entry('eip155:8453'), network: 'base' } as never, 1)).toBeUndefined();
    expect(wallets.unpayable({ ...entry('eip155:8453', 'upto'), network: 'base' } as never, 1)).toBe(
      'unsupported_scheme',
    );
    expect(wallets.unpayable({ ...entry('eip155:8453'), scheme: 'batch-settlement' }, 2)).toBe('unsupported_scheme');
  });

  it('with its EVM schemes deferred, knows its address at once, refuses to price or sign until ready(), then signs', async () => {
    const key = generatePrivateKey();
    const wallets = await loadWallets({ evm: key }, config.networks, undefined, { deferEvmSchemes: true });
    expect(wallets.addresses.evm).toBe(privateKeyToAccount(key).address);
    expect(wallets.evmAccount().address).toBe(privateKeyToAccount(key).address);
    const option = entry('eip155:8453');
    expect(() => wallets.unpayable(option, 2)).toThrow(/still loading/);
    expect(() => wallets.clientFor(option, 2, 1000n)).toThrow(/still loading/);
    await wallets.ready();
    expect(wallets.unpayable(option, 2)).toBeUndefined();
    const payload = await wallets
      .clientFor(option, 2, 1000n)
      .createPaymentPayload({ ...challenge, accepts: [option] } as never);
    expect((payload.payload as { authorization: { from: string } }).authorization.from).toBe(wallets.addresses.evm);
  });

  it('signs the chosen option with the official client, echoing it and the declared extensions unchanged', async () => {
    const key = generatePrivateKey();
    const wallets = await loadWallets({ evm: key }, config.networks);
    const option = entry('eip155:8453');
    const payload = await wallets
      .clientFor(option, 2, 1000n)
      .createPaymentPayload({ ...challenge, accepts: [option] } as never);
    expect(payload.accepted).toEqual(option);
    expect(payload.extensions).toMatchObject({ 'builder-code': { info: { a: 'tollbooth' } } });
    expect((payload.payload as { authorization: Record<string, string> }).authorization).toMatchObject({
      from: privateKeyToAccount(key).address,
      to: option.payTo,
      value: '1000',
    });
  });

  it('never signs above the cap it is given: the official spend controls hold it too', async () => {
    const wallets = await loadWallets({ evm: generatePrivateKey() }, config.networks);
    const option = entry('eip155:8453');
    await expect(
      wallets.clientFor(option, 2, 999n).createPaymentPayload({ ...challenge, accepts: [option] } as never),
    ).rejects.toThrow(/spendControls/);
  });
});
