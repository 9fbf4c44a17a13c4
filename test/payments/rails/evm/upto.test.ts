import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { createWalletClient, encodeFunctionData, getAddress, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../../../src/config/config.js';
import { createFacilitator, type Facilitator } from '../../../../src/payments/facilitators/facilitator.js';
import { BASE_MAINNET } from '../../../../src/shared/networks.js';
import { evmUptoRail, permit2Authorization } from '../../../../src/payments/rails/evm/upto.js';
import { railFor } from '../../../../src/payments/rails/index.js';
import { buildChallenge } from '../../../../src/payments/challenges/requirements.js';
import { annuity } from '../../../../tools/annuity.js';
import { compiledContract } from '../../../support/chain/compile.js';
import {
  expectedPermit2DomainSeparator,
  permit2Abi,
  permit2NonceUsed,
  PERMIT2,
  UPTO_PROXY,
} from '../../../support/chain/permit2.js';
import { startBaseEnvironment, type BaseEnvironment } from '../../../support/chain/permit2-env.js';
import {
  officialUptoPayment,
  resignUpto,
  uptoAuthorization,
  withFlippedSignature,
} from '../../../support/chain/permit2-sign.js';
import { localTransport, localViemChain } from '../../../support/chain/token.js';

let base: BaseEnvironment;
let config: Config;
let facilitator: Facilitator;
let challenge: PaymentRequired;
let entry: PaymentRequirements;

beforeAll(async () => {
  // Payers 0–4 approved Permit2; payer 5 never did.
  base = await startBaseEnvironment(6, { permit2: { approved: 5 } });
  config = loadConfig({ DATA_DIR: '/nonexistent-unused', LOG_LEVEL: 'silent', ...base.env });
  facilitator = await createFacilitator(config);
  challenge = buildChallenge(config, annuity as never) as PaymentRequired;
  const found = challenge.accepts.find((a) => a.scheme === 'upto' && a.network === BASE_MAINNET);
  if (!found) throw new Error('the tools challenge has no upto entry on Base');
  entry = found;
}, 120_000);
afterAll(async () => {
  await base?.stop();
});

const pay = (i: number) => officialUptoPayment(base.payers[i]!, challenge, BASE_MAINNET);
const verify = (p: PaymentPayload, r: PaymentRequirements = entry) => facilitator.client.verify(p, r);
const settle = (p: PaymentPayload, r: PaymentRequirements = entry) =>
  facilitator.client.settle(p, r) as Promise<SettleResponse>;

describe('the local chain carries the real Permit2 and a proxy that enforces the upto rules', () => {
  it('has Permit2 (runtime from the npm artifact) at its canonical address, with the EIP-712 domain of chain 8453', async () => {
    const { createPublicClient } = await import('viem');
    const client = createPublicClient({ chain: localViemChain(base.chain), transport: localTransport(base.chain) });
    const separator = await client.readContract({
      address: PERMIT2,
      abi: permit2Abi,
      functionName: 'DOMAIN_SEPARATOR',
    });
    expect(separator).toBe(expectedPermit2DomainSeparator(8453));
  });

  it('refuses on chain a settle sent by anyone but the facilitator named in the signed witness', async () => {
    const payment = await pay(0);
    const auth = uptoAuthorization(payment);
    const intruder = privateKeyToAccount(base.chain.accounts[0]!.privateKey);
    const wallet = createWalletClient({
      account: intruder,
      chain: localViemChain(base.chain),
      transport: localTransport(base.chain),
    });
    const { abi } = compiledContract('X402UptoProxy');
    const data = encodeFunctionData({
      abi,
      functionName: 'settle',
      args: [
        {
          permitted: { token: auth.permitted.token, amount: BigInt(auth.permitted.amount) },
          nonce: BigInt(auth.nonce),
          deadline: BigInt(auth.deadline),
        },
        BigInt(auth.permitted.amount),
        auth.from,
        { to: auth.witness.to, facilitator: auth.witness.facilitator, validAfter: BigInt(auth.witness.validAfter) },
        (payment.payload as { signature: `0x${string}` }).signature,
      ],
    });
    await expect(wallet.sendTransaction({ to: UPTO_PROXY, data })).rejects.toThrow(/UnauthorizedFacilitator|revert/);
    expect(await permit2NonceUsed(base.chain, auth.from as Address, BigInt(auth.nonce))).toBe(false);
  });
});

describe('EVM upto (Permit2) verified and settled by the official UptoEvmScheme facilitator', () => {
  it('advertises our settling address and the permit2 transfer method, and the rail handles that entry', () => {
    expect(entry.extra).toMatchObject({
      name: 'USD Coin',
      version: '2',
      assetTransferMethod: 'permit2',
      facilitatorAddress: base.facilitator,
    });
    expect(entry.amount).toBe('1000');
    const net = config.networks.find((n) => n.id === BASE_MAINNET)!;
    expect(railFor(entry, net)?.id).toBe(evmUptoRail.id); // the registry holds lazy rails: the same rail, its SDK loaded on use
    expect(facilitator.supports(BASE_MAINNET, 'upto')).toBe(true);
  });

  it('verifies a payment from the official client, settles the price through Permit2 and reports the settled amount', async () => {
    const payer = base.payers[0]!;
    const payment = await pay(0);
    const auth = uptoAuthorization(payment);
    expect(getAddress(auth.spender)).toBe(UPTO_PROXY);
    expect(getAddress(auth.witness.facilitator)).toBe(base.facilitator);
    const before = { payer: await base.balance(payer.address), payTo: await base.balance(base.payTo) };
    expect(await verify(payment)).toMatchObject({ isValid: true, payer: payer.address });
    const receipt = await settle(payment);
    expect(receipt).toMatchObject({ success: true, network: BASE_MAINNET, payer: payer.address, amount: '1000' });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await base.balance(payer.address)).toBe(before.payer - 1000n);
    expect(await base.balance(base.payTo)).toBe(before.payTo + 1000n);
    expect(await permit2NonceUsed(base.chain, payer.address, BigInt(auth.nonce))).toBe(true);
  });

  it('settles less than the signed maximum when asked, and never more', async () => {
    const payment = await pay(1);
    const payer = base.payers[1]!;
    const before = await base.balance(payer.address);
    expect(await settle(payment, { ...entry, amount: '1001' })).toMatchObject({
      success: false,
      errorReason: 'invalid_upto_evm_payload_settlement_exceeds_amount',
    });
    expect(await settle(payment, { ...entry, amount: '400' })).toMatchObject({ success: true, amount: '400' });
    expect(await base.balance(payer.address)).toBe(before - 400n);
  });

  it('keys the replay guard on the Permit2 owner and nonce, the pair the chain burns once', async () => {
    const payment = await pay(2);
    const auth = permit2Authorization(payment)!;
    const identified = evmUptoRail.identify(payment, entry);
    expect(identified).toEqual({
      ok: true,
      replayKey: `permit2:${BASE_MAINNET}:${auth.from.toLowerCase()}:${auth.nonce}`,
      payer: auth.from,
    });
    expect(evmUptoRail.identify({ ...payment, payload: { signature: '0x' } }, entry).ok).toBe(false);
  });

  it('lets an authorization settle once: the replay fails on chain and charges nothing more', async () => {
    const payer = base.payers[2]!;
    const payment = await pay(2);
    expect((await settle(payment)).success).toBe(true);
    const after = await base.balance(payer.address);
    expect((await verify(payment)).isValid).toBe(false);
    expect((await settle(payment)).success).toBe(false);
    expect(await base.balance(payer.address)).toBe(after);
  });

  it('answers permit2_allowance_required for a payer who never approved Permit2', async () => {
    const result = await verify(await pay(5));
    expect(result).toMatchObject({ isValid: false, invalidReason: 'permit2_allowance_required' });
  });

  const tampered: [string, (p: PaymentPayload) => Promise<PaymentPayload>, string][] = [
    [
      'a maximum below the price',
      (p) => resignUpto(base.payers[3]!, p, (a) => void (a.permitted.amount = '999')),
      'permit2_amount_mismatch',
    ],
    [
      'another token',
      (p) =>
        resignUpto(base.payers[3]!, p, (a) => void (a.permitted.token = '0x036CbD53842c5426634e7929541eC2318f3dCF7e')),
      'permit2_token_mismatch',
    ],
    [
      'another spender than the upto proxy',
      (p) => resignUpto(base.payers[3]!, p, (a) => void (a.spender = base.payTo)),
      'invalid_permit2_spender',
    ],
    [
      'witness.to not our pay-to',
      (p) => resignUpto(base.payers[3]!, p, (a) => void (a.witness.to = base.payers[4]!.address)),
      'invalid_permit2_recipient_mismatch',
    ],
    [
      'witness.facilitator not our settling address',
      (p) => resignUpto(base.payers[3]!, p, (a) => void (a.witness.facilitator = base.payers[4]!.address)),
      'upto_facilitator_mismatch',
    ],
    [
      'an expired deadline',
      (p) => resignUpto(base.payers[3]!, p, (a) => void (a.deadline = String(Math.floor(Date.now() / 1000) - 60))),
      'permit2_deadline_expired',
    ],
    [
      'a validAfter in the future',
      (p) =>
        resignUpto(
          base.payers[3]!,
          p,
          (a) => void (a.witness.validAfter = String(Math.floor(Date.now() / 1000) + 3600)),
        ),
      'permit2_not_yet_valid',
    ],
    ['a signature by someone else', (p) => resignUpto(base.payers[4]!, p, () => {}), 'invalid_permit2_signature'],
    [
      'a signature for another chain',
      (p) => resignUpto(base.payers[3]!, p, () => {}, 84532),
      'invalid_permit2_signature',
    ],
    ['a corrupted signature', async (p) => withFlippedSignature(p), 'invalid_permit2_signature'],
  ];
  for (const [label, tamper, reason] of tampered) {
    it(`refuses ${label} (${reason}) and moves no funds`, async () => {
      const payer = base.payers[3]!;
      const before = await base.balance(payer.address);
      const payment = await tamper(await pay(3));
      expect(await verify(payment)).toMatchObject({ isValid: false, invalidReason: reason });
      expect((await settle(payment)).success).toBe(false);
      expect(await base.balance(payer.address)).toBe(before);
    });
  }
});

describe('reconciling an upto settlement whose outcome was unknown', () => {
  const net = () => config.networks.find((n) => n.id === BASE_MAINNET)!;
  const pending = (payment: PaymentPayload, transaction = '') => ({
    replayKey: 'k',
    payload: payment,
    requirements: entry,
    transaction,
  });

  it('says pending for an authorization the chain has not seen yet, and settled with the transaction that burnt its nonce', async () => {
    const payment = await pay(4);
    expect(await evmUptoRail.lookup!(pending(payment), net(), config)).toMatchObject({ type: 'pending' });
    const receipt = await settle(payment);
    // No hash kept (a process stopped mid-call): the proxy's transfer that carries this owner and nonce names it.
    expect(await evmUptoRail.lookup!(pending(payment), net(), config)).toEqual({
      type: 'settled',
      transaction: receipt.transaction,
    });
    expect(await evmUptoRail.lookup!(pending(payment, receipt.transaction), net(), config)).toEqual({
      type: 'settled',
      transaction: receipt.transaction,
    });
  });

  it('says failed for an unused authorization past its deadline', async () => {
    const expired = await resignUpto(
      base.payers[4]!,
      await pay(4),
      (a) => void (a.deadline = String(Math.floor(Date.now() / 1000) - 120)), // past on our clock by over a minute
    );
    expect(await evmUptoRail.lookup!(pending(expired), net(), config)).toEqual({
      type: 'failed',
      reason: 'authorization_expired_unused',
    });
  });
});
