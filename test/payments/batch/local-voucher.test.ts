import type { PaymentPayload } from '@x402/core/types';
import { signVoucher } from '@x402/evm/batch-settlement/client';
import { BatchSettlementEvmScheme, InMemoryChannelStorage } from '@x402/evm/batch-settlement/server';
import { hashTypedData, recoverTypedDataAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { BATCH_SETTLEMENT_ADDRESS, BATCH_SETTLEMENT_DOMAIN, voucherTypes } from '@x402/evm';
import { describe, expect, it } from 'vitest';
import { checkVouchersNatively } from '../../../src/payments/batch/local-voucher.js';
import { voucherDigest, voucherSigner } from '../../../src/payments/batch/voucher-signer.js';
import { NETWORK, RECEIVER, payerChannel, requirements } from '../../support/batch-channel.js';

const { payer, channelConfig, channelId } = payerChannel();
const stranger = privateKeyToAccount(generatePrivateKey());

/** One time for every channel, so that two schemes' snapshots of it are equal. */
const STARTED = Date.now();

type Hook = (ctx: unknown) => Promise<unknown>;

/** An official scheme on in-memory storage holding the channel (charged 2 calls, fresh mirror unless told). */
async function schemeWithChannel(syncedAgoMs = 0): Promise<BatchSettlementEvmScheme> {
  const storage = new InMemoryChannelStorage();
  await storage.updateChannel(channelId, () => ({
    channelId,
    channelConfig,
    chargedCumulativeAmount: '2000',
    signedMaxClaimable: '2000',
    signature: '0x',
    balance: '1000000',
    totalClaimed: '0',
    withdrawRequestedAt: 0,
    refundNonce: 0,
    onchainSyncedAt: STARTED - syncedAgoMs,
    lastRequestTimestamp: STARTED,
  }));
  return new BatchSettlementEvmScheme(RECEIVER, { storage, withdrawDelay: 900 });
}

const hook = (scheme: BatchSettlementEvmScheme) => (scheme.schemeHooks as { onBeforeVerify: Hook }).onBeforeVerify;

async function voucher(max: string, signer = payer, config: object = channelConfig): Promise<PaymentPayload> {
  const signed = await signVoucher(signer, channelId, max, NETWORK);
  return {
    x402Version: 2,
    accepted: requirements,
    payload: { type: 'voucher', channelConfig: config, voucher: signed },
  };
}

describe('the native voucher signer', () => {
  it('recovers the same address as viem for signatures with v as 27/28 and as 0/1', async () => {
    for (let i = 0; i < 8; i++) {
      const account = privateKeyToAccount(generatePrivateKey());
      const signed = await signVoucher(account, channelId, String(1000 * (i + 1)), NETWORK);
      const viemSays = await recoverTypedDataAddress({
        domain: {
          ...BATCH_SETTLEMENT_DOMAIN,
          chainId: 84532,
          verifyingContract: BATCH_SETTLEMENT_ADDRESS as `0x${string}`,
        },
        types: voucherTypes,
        primaryType: 'Voucher',
        message: { channelId, maxClaimableAmount: BigInt(signed.maxClaimableAmount) },
        signature: signed.signature as `0x${string}`,
      });
      expect(voucherSigner(signed, 84532)).toBe(viemSays.toLowerCase());
      const v = parseInt(signed.signature.slice(130), 16);
      const zeroOne = `${signed.signature.slice(0, 130)}0${v - 27}`;
      expect(voucherSigner({ ...signed, signature: zeroOne }, 84532)).toBe(account.address.toLowerCase());
    }
  });

  it('signs over the same EIP-712 digest as viem on every chain, and refuses fields outside their types', () => {
    const amounts = ['0', '1', '1000', '18446744073709551616', ((1n << 128n) - 1n).toString()];
    for (const chainId of [1, 8453, 84532, 31337]) {
      for (const amount of amounts) {
        const id = `0x${Buffer.from(privateKeyToAccount(generatePrivateKey()).address.slice(2).repeat(2), 'hex').toString('hex').slice(0, 64)}`;
        const viemSays = hashTypedData({
          domain: { ...BATCH_SETTLEMENT_DOMAIN, chainId, verifyingContract: BATCH_SETTLEMENT_ADDRESS as `0x${string}` },
          types: voucherTypes,
          primaryType: 'Voucher',
          message: { channelId: id as `0x${string}`, maxClaimableAmount: BigInt(amount) },
        });
        const ours = voucherDigest({ channelId: id as `0x${string}`, maxClaimableAmount: amount }, chainId);
        expect(`0x${ours!.toString('hex')}`).toBe(viemSays);
      }
    }
    expect(voucherDigest({ channelId, maxClaimableAmount: (1n << 128n).toString() }, 1)).toBeUndefined();
    expect(voucherDigest({ channelId, maxClaimableAmount: '-1' }, 1)).toBeUndefined();
    expect(voucherDigest({ channelId: '0x1234', maxClaimableAmount: '1' }, 1)).toBeUndefined();
  });

  it('tells a malformed or unrecoverable signature apart from another signer', async () => {
    const signed = await signVoucher(payer, channelId, '3000', NETWORK);
    expect(voucherSigner({ ...signed, signature: '0x1234' }, 84532)).toBe(false);
    expect(voucherSigner({ ...signed, signature: `${signed.signature.slice(0, 130)}1f` }, 84532)).toBe(false);
    expect(voucherSigner({ ...signed, signature: `0x${'00'.repeat(64)}1b` }, 84532)).toBe(false);
    expect(voucherSigner(signed, 8453)).not.toBe(payer.address.toLowerCase()); // another chain's domain
  });
});

describe('the voucher check in front of the official hook', () => {
  it('accepts a good voucher on a fresh channel by itself, recording what the official hook records', async () => {
    const scheme = await schemeWithChannel();
    (scheme.schemeHooks as { onBeforeVerify: Hook }).onBeforeVerify = () => {
      throw new Error('the official hook was asked');
    };
    checkVouchersNatively(scheme);
    const payload = await voucher('3000');
    const out = (await hook(scheme)({ paymentPayload: payload, requirements })) as { skip: boolean; result: object };
    expect(out).toMatchObject({ skip: true, result: { isValid: true, payer: payer.address } });
    expect(scheme.readRequestContext(payload)).toMatchObject({ channelId, localVerify: true });
    expect(scheme.readRequestContext(payload)?.pendingId).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it('answers a good voucher exactly as the official hook does, but for the reservation id', async () => {
    const official = await schemeWithChannel();
    const ours = await schemeWithChannel();
    checkVouchersNatively(ours);
    const payload = await voucher('3000');
    const a = await hook(official)({ paymentPayload: payload, requirements });
    const b = await hook(ours)({ paymentPayload: payload, requirements });
    expect(b).toEqual(a);
    const context = (s: BatchSettlementEvmScheme) => ({ ...s.readRequestContext(payload), pendingId: undefined });
    expect(context(ours)).toEqual(context(official));
  });

  it.each([
    ['a voucher signed by someone else', () => voucher('3000', stranger)],
    ['a cumulative amount that is not ours plus the price', () => voucher('4000')],
    [
      'a channel config that differs from the stored one',
      () => voucher('3000', payer, { ...channelConfig, salt: `0x${'11'.repeat(32)}` }),
    ],
    ['a voucher above the channel balance', () => voucher('2000000')],
  ])('leaves %s to the official hook, which decides as without it', async (_, make) => {
    const official = await schemeWithChannel();
    const ours = await schemeWithChannel();
    checkVouchersNatively(ours);
    const payload = await make();
    const a = await hook(official)({ paymentPayload: payload, requirements });
    const b = await hook(ours)({ paymentPayload: payload, requirements });
    expect(b).toEqual(a);
    expect(b).not.toMatchObject({ result: { isValid: true } });
  });

  it('leaves a channel whose chain mirror is stale, and requirements for another pay-to, to the official hook', async () => {
    for (const [syncedAgoMs, req] of [
      [24 * 3600_000, requirements],
      [0, { ...requirements, payTo: '0x00000000000000000000000000000000000000d4' }],
    ] as const) {
      const official = await schemeWithChannel(syncedAgoMs);
      const ours = await schemeWithChannel(syncedAgoMs);
      checkVouchersNatively(ours);
      const payload = await voucher('3000');
      const b = await hook(ours)({ paymentPayload: payload, requirements: req });
      expect(b).toEqual(await hook(official)({ paymentPayload: payload, requirements: req }));
      expect(b).not.toMatchObject({ result: { isValid: true } });
    }
  });
});
