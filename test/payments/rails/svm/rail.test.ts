import { generateKeyPairSigner, type Address, type KeyPairSigner } from '@solana/kit';
import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { SOLANA_MAINNET_CAIP2 } from '@x402/svm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../../../src/config/config.js';
import type { NetworkEntry } from '../../../../src/shared/networks.js';
import { acceptsFor } from '../../../../src/payments/challenges/requirements.js';
import {
  FEE_PAYER_NOT_ISOLATED,
  FEE_PAYER_TRANSFERRING_FUNDS,
  SVM_LIMITS,
  svmExactRail,
} from '../../../../src/payments/rails/svm/rail.js';
import { annuity } from '../../../../tools/annuity.js';
import {
  LOCAL_SOLANA_NETWORK,
  signSvmPayment,
  startSolanaEnvironment,
  type SolanaEnvironment,
} from '../../../support/chain/solana-env.js';
import {
  appendInstruction,
  computeUnitLimit,
  computeUnitPrice,
  memoSignedBy,
  replaceInstruction,
  resign,
  withFeePayerSlotNoise,
  withSignature,
  withTransferAccount,
} from '../../../support/chain/solana-tamper.js';

let sol: SolanaEnvironment;
let config: Config;
let facilitator: x402Facilitator;
let entry: PaymentRequirements;
let net: NetworkEntry;
let stranger: KeyPairSigner;

beforeAll(async () => {
  sol = await startSolanaEnvironment(3);
  config = loadConfig({ ...sol.env, DATA_DIR: '/nonexistent-unused', LOG_LEVEL: 'silent' });
  facilitator = new x402Facilitator();
  const registered = svmExactRail.registerInProcess(
    facilitator,
    config.networks.filter((n) => n.family === 'svm'),
    config,
  );
  expect(registered).toContain(LOCAL_SOLANA_NETWORK);
  entry = acceptsFor(config, annuity).find((a) => a.network === LOCAL_SOLANA_NETWORK)!;
  net = config.networks.find((n) => n.id === LOCAL_SOLANA_NETWORK)!;
  stranger = await generateKeyPairSigner();
}, 60_000);
afterAll(async () => {
  await sol?.stop();
});

const pay = (payer: KeyPairSigner, accepted: PaymentRequirements = entry) =>
  signSvmPayment(payer, accepted, sol.rpc.url);

describe('the Solana exact rail: what the server advertises and how it identifies a payment', () => {
  it('advertises the local mint, the price in base units, the pay-to and our fee payer', () => {
    expect(entry).toMatchObject({
      scheme: 'exact',
      asset: sol.mint,
      amount: '1000',
      payTo: sol.payTo,
      extra: { feePayer: sol.feePayer.address },
    });
  });

  it('keys a payment by its network and message hash and names the token owner as payer', async () => {
    const payment = await pay(sol.payers[0]!);
    const id = svmExactRail.identify(payment, entry);
    expect(id).toMatchObject({ ok: true, payer: sol.payers[0]!.address });
    expect(id.ok && id.replayKey).toMatch(new RegExp(`^svm-exact:${LOCAL_SOLANA_NETWORK}:[A-Za-z0-9+/]{43}=$`));
  });

  it('gives two payments for the same price different keys (the client adds a random memo)', async () => {
    const [a, b] = await Promise.all([pay(sol.payers[0]!), pay(sol.payers[0]!)]);
    const [ka, kb] = [svmExactRail.identify(a, entry), svmExactRail.identify(b, entry)];
    expect(ka.ok && kb.ok && ka.replayKey !== kb.replayKey).toBe(true);
  });

  it('keeps the key when someone scribbles into the unsigned fee-payer signature slot', async () => {
    const payment = await pay(sol.payers[0]!);
    const noisy = withFeePayerSlotNoise(payment, sol.feePayer.address);
    expect(JSON.stringify(noisy)).not.toBe(JSON.stringify(payment));
    expect(svmExactRail.identify(noisy, entry)).toEqual(svmExactRail.identify(payment, entry));
  });

  it('refuses a payload that carries no transaction with a reason', () => {
    const bad = { x402Version: 2, accepted: entry, payload: { transaction: 'not a transaction' } } as PaymentPayload;
    const id = svmExactRail.identify(bad, entry);
    expect(id.ok).toBe(false);
    expect(!id.ok && id.message).toMatch(/base64 serialized, partially signed transaction/);
  });
});

describe('verifying and settling a real payment on the local SVM', () => {
  it('verifies, co-signs and lands the transfer: the payee gains exactly the price', async () => {
    const payer = sol.payers[0]!;
    const before = {
      payer: await sol.balance(payer.address),
      payTo: await sol.balance(sol.payTo),
      landed: sol.rpc.landed.length,
    };
    const payment = await pay(payer);
    const verified = await facilitator.verify(payment, entry);
    expect(verified).toMatchObject({ isValid: true, payer: payer.address });
    const settled = await facilitator.settle(payment, entry);
    expect(settled).toMatchObject({ success: true, network: LOCAL_SOLANA_NETWORK, payer: payer.address });
    expect(sol.rpc.landed).toHaveLength(before.landed + 1);
    expect(sol.rpc.landed.at(-1)).toBe(settled.transaction);
    expect(await sol.balance(payer.address)).toBe(before.payer - 1000n);
    expect(await sol.balance(sol.payTo)).toBe(before.payTo + 1000n);
    expect(sol.rpc.unknownMethods).toEqual([]);
  });

  it('never lands the same transaction twice: a second settle is a duplicate and moves nothing', async () => {
    const payment = await pay(sol.payers[1]!);
    const first = await facilitator.settle(payment, entry);
    expect(first.success).toBe(true);
    const payTo = await sol.balance(sol.payTo);
    const landed = sol.rpc.landed.length;
    const again = await facilitator.settle(payment, entry);
    expect(again).toMatchObject({ success: false, errorReason: 'duplicate_settlement' });
    expect(sol.rpc.landed).toHaveLength(landed);
    expect(await sol.balance(sol.payTo)).toBe(payTo);
  });

  it('tells reconciliation that a settled payment landed, deriving the transaction id when none was recorded', async () => {
    const payment = await pay(sol.payers[1]!);
    const settled = await facilitator.settle(payment, entry);
    const replayKey = (svmExactRail.identify(payment, entry) as { replayKey: string }).replayKey;
    expect(
      await svmExactRail.lookup!({ replayKey, payload: payment, requirements: entry, transaction: '' }, net, config),
    ).toEqual({ type: 'settled', transaction: settled.transaction });
    expect(
      await svmExactRail.lookup!(
        { replayKey, payload: payment, requirements: entry, transaction: settled.transaction },
        net,
        config,
      ),
    ).toEqual({ type: 'settled', transaction: settled.transaction });
  });

  it('tells reconciliation that a payment never sent is still pending while its blockhash is valid', async () => {
    const payment = await pay(sol.payers[1]!);
    const replayKey = (svmExactRail.identify(payment, entry) as { replayKey: string }).replayKey;
    expect(
      await svmExactRail.lookup!({ replayKey, payload: payment, requirements: entry, transaction: '' }, net, config),
    ).toEqual({ type: 'pending' });
  });

  it('finds by its message, in the payer history, a payment landed by another fee payer (a remote facilitator)', async () => {
    const payment = await pay(sol.payers[1]!);
    const remote = {
      ...config,
      facilitator: { ...config.facilitator, keys: { ...config.facilitator.keys, svm: undefined } },
    };
    const replayKey = (svmExactRail.identify(payment, entry) as { replayKey: string }).replayKey;
    const ask = () =>
      svmExactRail.lookup!(
        { replayKey, payload: payment, requirements: entry, transaction: '' },
        net,
        remote as Config,
      );
    expect(await ask()).toMatchObject({ type: 'pending', reason: expect.stringMatching(/not landed yet/) });
    const settled = await facilitator.settle(payment, entry); // the fee payer signs; we cannot compute its signature
    expect(await ask()).toEqual({ type: 'settled', transaction: settled.transaction });
  });
});

type Case = [
  label: string,
  reason: string | RegExp,
  make: () => Promise<{ payment: PaymentPayload; requirements?: PaymentRequirements }>,
];

const fresh = async () => generateKeyPairSigner();
const cases: Case[] = [
  [
    'an amount other than the price',
    'invalid_exact_svm_payload_amount_mismatch',
    async () => ({ payment: await pay(sol.payers[2]!, { ...entry, amount: '999' }) }),
  ],
  [
    'a transfer to another owner',
    'invalid_exact_svm_payload_recipient_mismatch',
    async () => ({ payment: await pay(sol.payers[2]!, { ...entry, payTo: stranger.address }) }),
  ],
  [
    'a destination that is not the pay-to’s associated token account',
    'invalid_exact_svm_payload_recipient_mismatch',
    async () => ({
      payment: await resign(await pay(sol.payers[2]!), sol.payers[2]!, (m) =>
        withTransferAccount(m, 2, stranger.address),
      ),
    }),
  ],
  [
    'another mint',
    'invalid_exact_svm_payload_mint_mismatch',
    async () => ({ payment: await pay(sol.payers[2]!, { ...entry, asset: sol.otherMint }) }),
  ],
  [
    'another network',
    'invalid_exact_svm_network_mismatch',
    async () => ({ payment: await pay(sol.payers[2]!, { ...entry, network: SOLANA_MAINNET_CAIP2 }) }),
  ],
  [
    'a forged client signature',
    'invalid_exact_svm_payload_signature_invalid',
    async () => ({ payment: withSignature(await pay(sol.payers[2]!), sol.payers[2]!.address, 'flipped') }),
  ],
  [
    'a missing client signature',
    'invalid_exact_svm_payload_signature_invalid',
    async () => ({ payment: withSignature(await pay(sol.payers[2]!), sol.payers[2]!.address, 'missing') }),
  ],
  [
    'our fee payer as the transfer authority',
    FEE_PAYER_TRANSFERRING_FUNDS,
    async () => ({ payment: await pay(sol.feePayer) }),
  ],
  [
    'our fee payer’s token account as the source',
    FEE_PAYER_TRANSFERRING_FUNDS,
    async () => {
      const ours = await sol.ledger.ata(sol.feePayer.address, sol.mint);
      return {
        payment: await resign(await pay(sol.payers[2]!), sol.payers[2]!, (m) => withTransferAccount(m, 0, ours)),
      };
    },
  ],
  [
    'our fee payer listed in another instruction',
    FEE_PAYER_NOT_ISOLATED,
    async () => ({
      payment: await resign(await pay(sol.payers[2]!), sol.payers[2]!, (m) =>
        appendInstruction(m, memoSignedBy(sol.feePayer.address)),
      ),
    }),
  ],
  [
    'a transaction paid by another fee payer',
    'invalid_exact_svm_fee_payer_mismatch',
    async () => ({
      payment: { ...(await pay(sol.payers[2]!, { ...entry, extra: { feePayer: stranger.address } })), accepted: entry },
    }),
  ],
  [
    'requirements naming a fee payer that is not ours',
    'invalid_exact_svm_fee_payer_not_managed_by_facilitator',
    async () => {
      const requirements = { ...entry, extra: { feePayer: stranger.address } };
      return { payment: await pay(sol.payers[2]!, requirements), requirements };
    },
  ],
  [
    `a compute unit price above ${SVM_LIMITS.maxPriorityFeeMicroLamports} microlamports`,
    'invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high',
    async () => ({
      payment: await resign(await pay(sol.payers[2]!), sol.payers[2]!, (m) =>
        replaceInstruction(m, 1, computeUnitPrice(BigInt(SVM_LIMITS.maxPriorityFeeMicroLamports) + 1n)),
      ),
    }),
  ],
  [
    `a compute unit limit above ${SVM_LIMITS.maxComputeUnits}`,
    'invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction_too_high',
    async () => ({
      payment: await resign(await pay(sol.payers[2]!), sol.payers[2]!, (m) =>
        replaceInstruction(m, 0, computeUnitLimit(1_400_000)),
      ),
    }),
  ],
  [
    'a third signer our fee payer would pay for',
    'invalid_exact_svm_payload_excessive_signers',
    async () => {
      const extra = await fresh();
      return {
        payment: await resign(
          await pay(sol.payers[2]!),
          sol.payers[2]!,
          (m) => appendInstruction(m, memoSignedBy(extra.address)),
          [extra],
        ),
      };
    },
  ],
  [
    'an instruction of another program',
    'invalid_exact_svm_payload_unknown_fifth_instruction',
    async () => ({
      payment: await resign(await pay(sol.payers[2]!), sol.payers[2]!, (m) =>
        appendInstruction(m, {
          programAddress: '11111111111111111111111111111111' as Address,
          data: new Uint8Array([2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]),
        }),
      ),
    }),
  ],
  [
    'a payer without the tokens',
    /^invalid_exact_svm_transaction_simulation_failed$/,
    async () => {
      const broke = await fresh();
      await sol.ledger.fund(broke.address, sol.mint, 10n);
      return { payment: await pay(broke) };
    },
  ],
  [
    'a payload that is not a transaction',
    'invalid_exact_svm_payload_transaction_could_not_be_decoded',
    async () => ({ payment: { x402Version: 2, accepted: entry, payload: { transaction: 'AAAA' } } as PaymentPayload }),
  ],
];

describe('tampered Solana payments are refused by verify and by settle, and nothing lands', () => {
  for (const [label, reason, make] of cases) {
    it(`refuses ${label}`, async () => {
      const { payment, requirements = entry } = await make();
      const landed = sol.rpc.landed.length;
      const payTo = await sol.balance(sol.payTo);
      const verified = await facilitator.verify(payment, requirements);
      expect(verified.isValid).toBe(false);
      expect(verified.invalidReason).toMatch(reason);
      const settled = await facilitator.settle(payment, requirements);
      expect(settled.success).toBe(false);
      expect(settled.errorReason).toMatch(reason);
      expect(sol.rpc.landed).toHaveLength(landed);
      expect(await sol.balance(sol.payTo)).toBe(payTo);
    });
  }
});

// Expiring the blockhash invalidates every transaction signed before it, so these run last.
describe('a payment whose blockhash has expired', () => {
  it('is refused by simulation, and reconciliation reports it can never land', async () => {
    const payment = await pay(sol.payers[2]!);
    sol.ledger.svm.expireBlockhash();
    const verified = await facilitator.verify(payment, entry);
    expect(verified).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_exact_svm_transaction_simulation_failed',
    });
    expect(verified.invalidMessage).toMatch(/BlockhashNotFound/);
    const replayKey = (svmExactRail.identify(payment, entry) as { replayKey: string }).replayKey;
    expect(
      await svmExactRail.lookup!({ replayKey, payload: payment, requirements: entry, transaction: '' }, net, config),
    ).toEqual({ type: 'failed', reason: 'blockhash_expired' });
    // With another fee payer's signature unknown, the payer's whole history shows it never landed either.
    const remote = {
      ...config,
      facilitator: { ...config.facilitator, keys: { ...config.facilitator.keys, svm: undefined } },
    };
    expect(
      await svmExactRail.lookup!(
        { replayKey, payload: payment, requirements: entry, transaction: '' },
        net,
        remote as Config,
      ),
    ).toEqual({ type: 'failed', reason: 'blockhash_expired' });
  });
});
