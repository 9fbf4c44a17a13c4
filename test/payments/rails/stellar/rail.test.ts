import { Address, Keypair, Networks, Operation, xdr } from '@stellar/stellar-sdk';
import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../../../src/config/config.js';
import { NetworkEntrySchema, type NetworkEntry } from '../../../../src/shared/networks.js';
import { stellarExactRail } from '../../../../src/payments/rails/stellar/rail.js';
import { ExactStellarFacilitatorScheme } from '../../../../src/payments/rails/stellar/facilitator.js';
import { payStellar, startStellarEnvironment, type StellarEnvironment } from '../../../support/chain/stellar.js';
import {
  entryFor,
  invokeOperation,
  payloadInvocation,
  payloadTransaction,
  rebuildPayload,
  resignEntry,
  sourceAccountEntry,
  withAuthEntries,
  withFlippedSignatureBit,
  withSignature,
} from '../../../support/chain/stellar-tamper.js';

let env: StellarEnvironment;
let config: Config;
let net: NetworkEntry;
let facilitator: x402Facilitator;
let accepted: PaymentRequirements;
const PRICE = 100_000n;

beforeAll(async () => {
  env = await startStellarEnvironment({ payers: 6 });
  config = loadConfig({ DATA_DIR: '/nonexistent', LOG_LEVEL: 'silent', ...env.env });
  net = NetworkEntrySchema.parse(env.networkEntry);
  facilitator = new x402Facilitator();
  expect(stellarExactRail.registerInProcess(facilitator, [net], config)).toEqual([env.network]);
  accepted = {
    scheme: 'exact',
    network: env.network as PaymentRequirements['network'],
    asset: env.usdc.contract,
    amount: PRICE.toString(),
    payTo: env.payTo.publicKey(),
    maxTimeoutSeconds: 300,
    extra: { areFeesSponsored: true },
  };
});
afterAll(async () => {
  await env?.stop();
});

const submissions = () => env.rpc.calls.get('sendTransaction') ?? 0;

/** Verify and settle both refuse the payment with the reason, and nothing reaches sendTransaction. */
async function expectRefused(payload: PaymentPayload, reason: string, requirements = accepted): Promise<void> {
  const sent = submissions();
  const verified = await facilitator.verify(payload, requirements);
  expect(verified).toMatchObject({ isValid: false, invalidReason: reason });
  const settled = await facilitator.settle(payload, requirements);
  expect(settled).toMatchObject({ success: false, errorReason: reason, transaction: '' });
  expect(submissions()).toBe(sent);
}

describe('Stellar exact: verify and settle against a look-alike Soroban RPC that checks what is submitted', () => {
  it('verifies the official client’s payment and settles it in a fee-sponsored transaction moving exactly the price', async () => {
    const payer = env.payers[0]!;
    const before = { payer: env.balance(payer.publicKey()), payTo: env.balance(env.payTo.publicKey()) };
    const payment = await payStellar(env, payer, accepted);
    expect(await facilitator.verify(payment, accepted)).toEqual({ isValid: true, payer: payer.publicKey() });
    const settled = await facilitator.settle(payment, accepted);
    expect(settled).toMatchObject({ success: true, network: env.network, payer: payer.publicKey() });
    expect(settled.transaction).toMatch(/^[0-9a-f]{64}$/);
    expect(env.rpc.included.at(-1)).toBe(settled.transaction);
    expect(env.rpc.refusals).toEqual([]);
    expect(env.balance(payer.publicKey())).toBe(before.payer - PRICE);
    expect(env.balance(env.payTo.publicKey())).toBe(before.payTo + PRICE);
    // The client asked the look-alike (never the internet) for ledgers and close times.
    expect(env.rpc.calls.get('horizon:/ledgers')).toBeGreaterThan(0);
  });

  it('settles payments of two payers at once without a sequence-number clash', async () => {
    const [a, b] = await Promise.all([
      payStellar(env, env.payers[1]!, accepted),
      payStellar(env, env.payers[2]!, accepted),
    ]);
    const results = await Promise.all([facilitator.settle(a, accepted), facilitator.settle(b, accepted)]);
    expect(results.map((r) => r.success)).toEqual([true, true]);
    expect(env.rpc.refusals).toEqual([]);
  });

  it('registers in-process only where it can settle: a known Stellar network with an RPC URL, and a key', () => {
    const pubnetWithoutRpc = NetworkEntrySchema.parse({ ...env.networkEntry, id: 'stellar:pubnet', rpcUrl: undefined });
    const futurenet = NetworkEntrySchema.parse({ ...env.networkEntry, id: 'stellar:futurenet' });
    expect(
      stellarExactRail.registerInProcess(new x402Facilitator(), [net, pubnetWithoutRpc, futurenet], config),
    ).toEqual([env.network]);
    const keyless = { ...config, facilitator: { ...config.facilitator, keys: {} } };
    expect(stellarExactRail.registerInProcess(new x402Facilitator(), [net], keyless)).toEqual([]);
  });

  it('treats an unreachable RPC as the facilitator failing, not the payment: verify throws, settle submits nothing', async () => {
    const payment = await payStellar(env, env.payers[0]!, accepted);
    const offline = new ExactStellarFacilitatorScheme({
      network: env.network,
      passphrase: env.passphrase,
      rpcUrl: 'http://127.0.0.1:9',
      secret: env.facilitator.secret(),
      rpcTimeoutMs: 2_000,
      confirmationTimeoutMs: 2_000,
    });
    await expect(offline.verify(payment, accepted)).rejects.toThrow();
    expect(await offline.settle(payment, accepted)).toMatchObject({
      success: false,
      errorReason: 'settle_exact_stellar_rpc_unavailable',
      transaction: '',
    });
  });

  it('advertises fee sponsorship and its settlement account', () => {
    const supported = facilitator.getSupported();
    expect(supported.kinds).toContainEqual({
      x402Version: 2,
      scheme: 'exact',
      network: env.network,
      extra: { areFeesSponsored: true },
    });
    expect(JSON.stringify(supported.signers)).toContain(env.facilitator.publicKey());
  });
});

describe('Stellar exact: each tampered payment is refused with its reason and nothing is submitted', () => {
  const payer = () => env.payers[3]!;

  it('refuses a transfer of another amount', async () => {
    await expectRefused(
      await payStellar(env, payer(), accepted, { amount: (PRICE - 1n).toString() }),
      'invalid_exact_stellar_payload_wrong_amount',
    );
  });

  it('refuses a transfer to another recipient', async () => {
    await expectRefused(
      await payStellar(env, payer(), accepted, { payTo: env.payers[5]!.publicKey() }),
      'invalid_exact_stellar_payload_wrong_recipient',
    );
  });

  it('refuses a transfer of another asset contract', async () => {
    await expectRefused(
      await payStellar(env, payer(), accepted, { asset: env.other.contract }),
      'invalid_exact_stellar_payload_wrong_asset',
    );
  });

  it('refuses a payment for another network, and an authorization signed for another network', async () => {
    const payment = await payStellar(env, payer(), accepted);
    await expectRefused({ ...payment, accepted: { ...accepted, network: 'stellar:pubnet' } }, 'network_mismatch');
    const [entry] = payloadInvocation(payment, env.passphrase).auth;
    const forPubnet = await resignEntry(entry!, payer(), Networks.PUBLIC);
    await expectRefused(
      withAuthEntries(payment, env.passphrase, [forPubnet]),
      'invalid_exact_stellar_payload_bad_payer_signature',
    );
  });

  it('refuses a transaction with a second operation', async () => {
    const payment = await payStellar(env, payer(), accepted);
    const ops = payloadTransaction(payment, env.passphrase).toEnvelope().v1().tx().operations();
    const extra = Operation.bumpSequence({ bumpTo: '0' });
    await expectRefused(
      rebuildPayload(payment, env.passphrase, { operations: [...ops, extra] }),
      'invalid_exact_stellar_payload_wrong_operation',
    );
  });

  it('refuses a call of another function on the asset', async () => {
    const payment = await payStellar(env, payer(), accepted);
    const { invoke, auth } = payloadInvocation(payment, env.passphrase);
    await expectRefused(
      rebuildPayload(payment, env.passphrase, { operations: [invokeOperation(invoke, auth, { fn: 'burn' })] }),
      'invalid_exact_stellar_payload_wrong_function_name',
    );
  });

  it('refuses an unsigned, a corrupted and a foreign-key authorization', async () => {
    const payment = await payStellar(env, payer(), accepted);
    const [entry] = payloadInvocation(payment, env.passphrase).auth;
    await expectRefused(
      withAuthEntries(payment, env.passphrase, [withSignature(entry!, xdr.ScVal.scvVoid())]),
      'invalid_exact_stellar_payload_missing_payer_signature',
    );
    await expectRefused(
      withAuthEntries(payment, env.passphrase, [withFlippedSignatureBit(entry!)]),
      'invalid_exact_stellar_payload_bad_payer_signature',
    );
    // A valid signature by a key that is not the payer's: only the chain knows the account's signers.
    const foreign = await resignEntry(entry!, Keypair.random(), env.passphrase);
    await expectRefused(
      withAuthEntries(payment, env.passphrase, [foreign]),
      'invalid_exact_stellar_payload_simulation_failed',
    );
  });

  it('refuses an authorization whose expiration lies beyond maxTimeoutSeconds', async () => {
    await expectRefused(
      await payStellar(env, payer(), accepted, { maxTimeoutSeconds: 3000 }),
      'invalid_exact_stellar_signature_expiration_too_far',
    );
  });

  it('refuses the facilitator account as transaction source, operation source, payer or authorizer', async () => {
    const sponsor = env.facilitator;
    const payment = await payStellar(env, payer(), accepted);
    const { invoke, auth } = payloadInvocation(payment, env.passphrase);
    await expectRefused(
      rebuildPayload(payment, env.passphrase, { source: sponsor.publicKey() }),
      'invalid_exact_stellar_payload_unsafe_tx_or_op_source',
    );
    await expectRefused(
      rebuildPayload(payment, env.passphrase, {
        operations: [invokeOperation(invoke, auth, { source: sponsor.publicKey() })],
      }),
      'invalid_exact_stellar_payload_unsafe_tx_or_op_source',
    );
    const sponsorEntry = await resignEntry(
      entryFor(auth[0]!, Address.fromString(sponsor.publicKey()).toScAddress()),
      sponsor,
      env.passphrase,
    );
    await expectRefused(
      withAuthEntries(payment, env.passphrase, [auth[0]!, sponsorEntry]),
      'invalid_exact_stellar_payload_facilitator_in_auth',
    );
    await expectRefused(
      withAuthEntries(payment, env.passphrase, [sourceAccountEntry(auth[0]!)]),
      'invalid_exact_stellar_payload_unsupported_credential_type',
    );
    env.usdc.balances.set(sponsor.publicKey(), PRICE);
    await expectRefused(await payStellar(env, sponsor, accepted), 'invalid_exact_stellar_payload_facilitator_is_payer');
    expect(env.balance(sponsor.publicKey())).toBe(PRICE);
  });
});

describe('Stellar exact: one authorization pays once', () => {
  it('refuses the same authorization settled a second time: the chain has consumed its nonce', async () => {
    const payer = env.payers[4]!;
    const payment = await payStellar(env, payer, accepted);
    const before = env.balance(env.payTo.publicKey());
    expect((await facilitator.settle(payment, accepted)).success).toBe(true);
    const again = await facilitator.settle(payment, accepted);
    expect(again).toMatchObject({ success: false, errorReason: 'invalid_exact_stellar_payload_simulation_failed' });
    expect(again.errorMessage).toMatch(/Error\(Auth, ExistingValue\)/);
    expect(env.balance(env.payTo.publicKey())).toBe(before + PRICE);
  });

  it('executes exactly one transfer for 5 concurrent settlements of one authorization', async () => {
    const payment = await payStellar(env, env.payers[4]!, accepted);
    const before = { payTo: env.balance(env.payTo.publicKey()), included: env.rpc.included.length };
    const results = await Promise.all(Array.from({ length: 5 }, () => facilitator.settle(payment, accepted)));
    expect(results.filter((r) => r.success)).toHaveLength(1);
    expect(
      results
        .filter((r) => !r.success)
        .every((r) => r.errorReason === 'invalid_exact_stellar_payload_simulation_failed'),
    ).toBe(true);
    expect(env.rpc.included.length).toBe(before.included + 1);
    expect(env.balance(env.payTo.publicKey())).toBe(before.payTo + PRICE);
  });

  it('keys the replay guard on payer + authorization nonce, whatever envelope carries the entry', async () => {
    const payer = env.payers[4]!;
    const payment = await payStellar(env, payer, accepted);
    const [entry] = payloadInvocation(payment, env.passphrase).auth;
    const nonce = entry!.credentials().address().nonce().toString();
    const identified = stellarExactRail.identify(payment, accepted);
    expect(identified).toEqual({
      ok: true,
      replayKey: `stellar-exact:${env.network}:${payer.publicKey()}:${nonce}`,
      payer: payer.publicKey(),
    });
    const rewrapped = rebuildPayload(payment, env.passphrase, { source: env.payers[5]!.publicKey() });
    const longer = withAuthEntries(payment, env.passphrase, [
      await resignEntry(entry!, payer, env.passphrase, entry!.credentials().address().signatureExpirationLedger() - 1),
    ]);
    expect(stellarExactRail.identify(rewrapped, accepted)).toEqual(identified);
    expect(stellarExactRail.identify(longer, accepted)).toEqual(identified);
    expect(stellarExactRail.identify(await payStellar(env, payer, accepted), accepted)).not.toEqual(identified);
    expect(stellarExactRail.identify({ ...payment, payload: { transaction: 'AAAA' } }, accepted)).toMatchObject({
      ok: false,
    });
  });
});

describe('Stellar exact: a settlement whose outcome was not known', () => {
  let impatient: ExactStellarFacilitatorScheme;
  const lookup = (payload: PaymentPayload, transaction = '') =>
    stellarExactRail.lookup!({ replayKey: 'k', payload, requirements: accepted, transaction }, net, config);
  beforeAll(() => {
    impatient = new ExactStellarFacilitatorScheme({
      network: env.network,
      passphrase: env.passphrase,
      rpcUrl: env.rpc.url,
      secret: env.facilitator.secret(),
      rpcTimeoutMs: 5_000,
      confirmationTimeoutMs: 300,
      pollIntervalMs: 50,
    });
  });

  it('answers settlement_pending with the hash, waits for that transaction when settled again, and lookup finds it settled', async () => {
    const payment = await payStellar(env, env.payers[5]!, accepted);
    env.rpc.hold = true;
    const sent = submissions();
    const settled = await impatient.settle(payment, accepted);
    expect(settled).toMatchObject({ success: false, errorReason: 'settlement_pending' });
    expect(settled.transaction).toMatch(/^[0-9a-f]{64}$/);
    expect(await impatient.settle(payment, accepted)).toMatchObject({
      success: false,
      errorReason: 'settlement_pending',
      transaction: settled.transaction,
    });
    expect(submissions()).toBe(sent + 1);
    expect(await lookup(payment, settled.transaction)).toEqual({ type: 'pending' });
    expect(await lookup(payment)).toEqual({ type: 'pending' });
    env.rpc.release();
    expect(await lookup(payment, settled.transaction)).toEqual({ type: 'settled', transaction: settled.transaction });
    // Without the hash, the asset's transfer events lead to the transaction carrying this very nonce.
    expect(await lookup(payment)).toEqual({ type: 'settled', transaction: settled.transaction });
    expect(await impatient.settle(payment, accepted)).toMatchObject({
      success: true,
      transaction: settled.transaction,
    });
    expect(submissions()).toBe(sent + 1);
  });

  it('settled again after its authorization expired, still reports the transaction that carried it', async () => {
    const payment = await payStellar(env, env.payers[5]!, accepted);
    env.rpc.hold = true;
    const settled = await impatient.settle(payment, accepted);
    expect(settled.errorReason).toBe('settlement_pending');
    env.rpc.release();
    env.rpc.ledger.advance(70);
    expect(await impatient.settle(payment, accepted)).toMatchObject({
      success: true,
      transaction: settled.transaction,
    });
  });

  it('keeps a settlement that failed on chain pending while its authorization could still pay, failed once it expired', async () => {
    const payer = env.payers[5]!.publicKey();
    const payment = await payStellar(env, env.payers[5]!, accepted);
    env.rpc.hold = true;
    const settled = await impatient.settle(payment, accepted);
    expect(settled.errorReason).toBe('settlement_pending');
    const funds = env.balance(payer);
    env.usdc.balances.set(payer, 0n);
    env.rpc.release();
    expect(await impatient.settle(payment, accepted)).toMatchObject({
      success: false,
      errorReason: 'invalid_exact_stellar_payload_simulation_failed',
    });
    env.usdc.balances.set(payer, funds);
    expect(await lookup(payment, settled.transaction)).toEqual({ type: 'pending' });
    env.rpc.ledger.advance(70);
    expect(await lookup(payment, settled.transaction)).toEqual({
      type: 'failed',
      reason: 'authorization_expired_unused',
    });
    expect(env.balance(payer)).toBe(funds);
  });

  it('gives an authorization up as unused only once it has expired and no transaction carried it', async () => {
    const payment = await payStellar(env, env.payers[5]!, accepted);
    const neverLanded = '00'.repeat(32);
    expect(await lookup(payment, neverLanded)).toEqual({ type: 'pending' });
    expect(await lookup(payment)).toEqual({ type: 'pending' });
    env.rpc.ledger.advance(70);
    expect(await lookup(payment, neverLanded)).toEqual({ type: 'failed', reason: 'authorization_expired_unused' });
    expect(await lookup(payment)).toEqual({ type: 'failed', reason: 'authorization_expired_unused' });
    await expectRefused(payment, 'invalid_exact_stellar_signature_expired');
  });
});
