import {
  Account,
  BASE_FEE,
  Keypair,
  Operation,
  rpc,
  TransactionBuilder,
  xdr,
  type Transaction,
} from '@stellar/stellar-sdk';
import type { PaymentRequirements } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payStellar, startStellarEnvironment, type StellarEnvironment } from './stellar.js';
import { payloadInvocation, withFlippedSignatureBit } from './stellar-tamper.js';

let env: StellarEnvironment;
let server: rpc.Server;
let accepted: PaymentRequirements;

beforeAll(async () => {
  env = await startStellarEnvironment({ payers: 2 });
  server = new rpc.Server(env.rpc.url, { allowHttp: true });
  accepted = {
    scheme: 'exact',
    network: env.network as PaymentRequirements['network'],
    asset: env.usdc.contract,
    amount: '5000',
    payTo: env.payTo.publicKey(),
    maxTimeoutSeconds: 300,
    extra: { areFeesSponsored: true },
  };
});
afterAll(async () => {
  await env?.stop();
});

/** A settlement transaction as a facilitator builds it: its own source, the payer's signed entry, simulated and signed. */
async function settlement(
  options: {
    signer?: Keypair;
    entries?: (e: xdr.SorobanAuthorizationEntry[]) => xdr.SorobanAuthorizationEntry[];
    sequenceOffset?: bigint;
    to?: string;
  } = {},
): Promise<Transaction> {
  const payment = await payStellar(env, env.payers[0]!, accepted, options.to ? { payTo: options.to } : {});
  const { func, auth } = payloadInvocation(payment, env.passphrase);
  const sequence = (
    BigInt((await server.getAccount(env.facilitator.publicKey())).sequenceNumber()) + (options.sequenceOffset ?? 0n)
  ).toString();
  const build = (entries: xdr.SorobanAuthorizationEntry[]) =>
    new TransactionBuilder(new Account(env.facilitator.publicKey(), sequence), {
      fee: BASE_FEE,
      networkPassphrase: env.passphrase,
    })
      .addOperation(Operation.invokeHostFunction({ func, auth: entries }))
      .setTimeout(60)
      .build();
  const sim = await server.simulateTransaction(build(auth));
  if (!rpc.Api.isSimulationSuccess(sim)) throw new Error(sim.error);
  const tx = rpc.assembleTransaction(build(options.entries ? options.entries(auth) : auth), sim).build();
  tx.sign(options.signer ?? env.facilitator);
  return tx;
}

const refusal = (sent: rpc.Api.SendTransactionResponse) => ({
  status: sent.status,
  code: sent.errorResult?.result().switch().name,
});

describe('the look-alike Soroban RPC', () => {
  it('includes a facilitator-signed transfer the payer authorized, moves the balance, and calls the same envelope a DUPLICATE', async () => {
    const before = env.balance(env.payTo.publicKey());
    const tx = await settlement();
    expect((await server.sendTransaction(tx)).status).toBe('PENDING');
    const result = await server.getTransaction(tx.hash().toString('hex'));
    expect(result.status).toBe(rpc.Api.GetTransactionStatus.SUCCESS);
    expect(env.balance(env.payTo.publicKey())).toBe(before + 5000n);
    expect((await server.sendTransaction(tx)).status).toBe('DUPLICATE');
  });

  it('refuses an envelope signed by another key, or with a sequence number that is not the next one', async () => {
    expect(refusal(await server.sendTransaction(await settlement({ signer: Keypair.random() })))).toEqual({
      status: 'ERROR',
      code: 'txBadAuth',
    });
    expect(refusal(await server.sendTransaction(await settlement({ sequenceOffset: 1n })))).toEqual({
      status: 'ERROR',
      code: 'txBadSeq',
    });
  });

  it('refuses what the facilitator must never sponsor: a transfer to someone else', async () => {
    const sent = await server.sendTransaction(await settlement({ to: env.payers[1]!.publicKey() }));
    expect(refusal(sent)).toEqual({ status: 'ERROR', code: 'txMalformed' });
    expect(env.rpc.refusals.at(-1)?.reason).toMatch(/not the pay-to address/);
  });

  it('fails in its ledger a transfer whose payer signature does not verify, moving nothing', async () => {
    const before = env.balance(env.payers[0]!.publicKey());
    const tx = await settlement({ entries: (auth) => [withFlippedSignatureBit(auth[0]!)] });
    expect((await server.sendTransaction(tx)).status).toBe('PENDING');
    expect((await server.getTransaction(tx.hash().toString('hex'))).status).toBe(rpc.Api.GetTransactionStatus.FAILED);
    expect(env.balance(env.payers[0]!.publicKey())).toBe(before);
  });
});
