import type { PaymentPayload } from '@x402/core/types';
import { BATCH_SETTLEMENT_DOMAIN, claimBatchTypes, voucherTypes } from '@x402/evm';
import { type Address, type Hex, createPublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BATCH_SETTLEMENT,
  PERMIT2_DEPOSIT_COLLECTOR,
  type BatchSettlementEnvironment,
  advanceChainTime,
  batchSettlementWithdrawAbi,
  chainWallet,
  readOnchainChannel,
  readReceiverTotals,
  startBatchSettlementEnvironment,
} from './batch-settlement.js';
import {
  BASE_NETWORK,
  type BatchParties,
  type BatchPayer,
  batchPayer,
  paidCall,
  payloadChannel,
  startBatchParties,
} from './batch-settlement-parties.js';
import { compiledContract } from './compile.js';
import { PERMIT2, approvePermit2 } from './permit2.js';
import { localTransport, localViemChain } from './token.js';

const PRICE = 1_000n;
const START = 10_000_000n;
const CALLS = 4;

let env: BatchSettlementEnvironment;
let parties: BatchParties;
let alice: BatchPayer;
let payloads: PaymentPayload[] = [];

const balance = (who: Address) => env.balance(who);
const depositOf = (payload: PaymentPayload) =>
  BigInt((payload.payload as { deposit: { amount: string } }).deposit.amount);

/** A claim row for `payload`'s voucher that asks for `totalClaimed`, signed as a batch by `signer`. */
async function claimArgs(payload: PaymentPayload, totalClaimed: bigint, signer = env.receiverAuthorizer) {
  const { channelId, maxClaimableAmount, config, signature } = payloadChannel(payload);
  const rows = [{ voucher: { channel: config, maxClaimableAmount }, signature, totalClaimed }];
  const authorizerSignature = await signer.signTypedData({
    domain: { ...BATCH_SETTLEMENT_DOMAIN, chainId: env.chain.chainId, verifyingContract: BATCH_SETTLEMENT },
    types: claimBatchTypes,
    primaryType: 'ClaimBatch',
    message: { claims: [{ channelId, maxClaimableAmount, totalClaimed }] },
  });
  return { rows, authorizerSignature };
}

/** Simulates a direct escrow call from the facilitator's account; resolves to the revert text, or '' if it passes. */
async function simulate(functionName: string, args: unknown[], from?: Hex): Promise<string> {
  const reader = createPublicClient({ chain: localViemChain(env.chain), transport: localTransport(env.chain) });
  const account = privateKeyToAccount(from ?? (env.env.FACILITATOR_EVM_PRIVATE_KEY as Hex));
  const abi = compiledContract('X402BatchSettlement').abi;
  try {
    await reader.simulateContract({ address: BATCH_SETTLEMENT, abi, functionName, args, account });
    return '';
  } catch (error) {
    return String(error);
  }
}

beforeAll(async () => {
  env = await startBatchSettlementEnvironment(3);
  parties = await startBatchParties(env, PRICE);
  alice = batchPayer(env, env.payers[0]!);
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

describe('the look-alike batch-settlement escrow with the official x402 client, server and facilitator', () => {
  it('advertises the escrow parameters the official server scheme adds to the challenge', () => {
    expect(parties.requirements).toMatchObject({
      scheme: 'batch-settlement',
      network: BASE_NETWORK,
      amount: PRICE.toString(),
      asset: env.token,
      payTo: env.payTo,
      extra: { receiverAuthorizer: env.receiverAuthorizer.address, withdrawDelay: 900 },
    });
  });

  it('takes an EIP-3009 deposit on the first call and plain vouchers after it, moving only the deposit', async () => {
    payloads = [];
    for (let i = 0; i < CALLS; i++) payloads.push((await paidCall(parties, alice)).payload);
    expect(payloads.map((p) => (p.payload as { type: string }).type)).toEqual([
      'deposit',
      'voucher',
      'voucher',
      'voucher',
    ]);
    const deposit = depositOf(payloads[0]!);
    const last = payloadChannel(payloads[CALLS - 1]!);
    expect(last.maxClaimableAmount).toBe(PRICE * BigInt(CALLS));
    expect(await balance(alice.account.address)).toBe(START - deposit);
    expect(await balance(BATCH_SETTLEMENT)).toBe(deposit);
    expect(await readOnchainChannel(env.chain, last.channelId)).toMatchObject({ balance: deposit, totalClaimed: 0n });
  });

  it('refuses a claim above the signed voucher, through the facilitator and on the escrow itself', async () => {
    const last = payloads[CALLS - 1]!;
    const { channelId, maxClaimableAmount, config, signature } = payloadChannel(last);
    const over = await claimArgs(last, maxClaimableAmount + 1n);
    const claims = [{ voucher: { channel: config, maxClaimableAmount: maxClaimableAmount.toString() }, signature }];
    const payload = {
      type: 'claim',
      claims: [{ ...claims[0]!, totalClaimed: (maxClaimableAmount + 1n).toString() }],
      claimAuthorizerSignature: over.authorizerSignature,
    };
    const result = await parties.facilitator.settle(
      { x402Version: 2, accepted: parties.requirements, payload } as PaymentPayload,
      parties.requirements,
    );
    expect(result).toMatchObject({
      success: false,
      errorReason: 'invalid_batch_settlement_evm_claim_simulation_failed',
    });
    expect(await simulate('claimWithSignature', [over.rows, over.authorizerSignature])).toContain(
      'ClaimExceedsVoucher',
    );
    expect((await readOnchainChannel(env.chain, channelId)).totalClaimed).toBe(0n);
  });

  it('refuses a claim batch that the receiver authorizer did not sign', async () => {
    const last = payloads[CALLS - 1]!;
    const forged = await claimArgs(last, PRICE, env.payers[1]!);
    expect(await simulate('claimWithSignature', [forged.rows, forged.authorizerSignature])).toContain(
      'InvalidSignature',
    );
    expect(await simulate('claim', [forged.rows])).toContain('Unauthorized');
  });

  it('refuses a claim whose voucher the payer side did not sign', async () => {
    const honest = await claimArgs(payloads[1]!, PRICE);
    const { channelId } = payloadChannel(payloads[1]!);
    const stranger = env.payers[1]!;
    const signature = await stranger.signTypedData({
      domain: { ...BATCH_SETTLEMENT_DOMAIN, chainId: env.chain.chainId, verifyingContract: BATCH_SETTLEMENT },
      types: voucherTypes,
      primaryType: 'Voucher',
      message: { channelId, maxClaimableAmount: PRICE * 2n },
    });
    const rows = [{ ...honest.rows[0]!, signature }];
    expect(await simulate('claimWithSignature', [rows, honest.authorizerSignature])).toContain('InvalidSignature');
    expect(await simulate('claimWithSignature', [honest.rows, honest.authorizerSignature])).toBe('');
  });

  it('claims exactly the charged sum into the channel with one claim transaction, moving no tokens', async () => {
    const before = await balance(env.payTo);
    const claims = await parties.manager.claim();
    expect(claims).toHaveLength(1);
    expect(claims[0]).toMatchObject({ vouchers: 1 });
    const { channelId } = payloadChannel(payloads[CALLS - 1]!);
    const charged = PRICE * BigInt(CALLS);
    expect((await readOnchainChannel(env.chain, channelId)).totalClaimed).toBe(charged);
    expect(await readReceiverTotals(env.chain, env.payTo, env.token)).toEqual({
      totalClaimed: charged,
      totalSettled: 0n,
    });
    expect(await balance(env.payTo)).toBe(before);
  });

  it('ignores a replayed claim that is not above the claimed total', async () => {
    const replay = await claimArgs(payloads[1]!, PRICE * 2n);
    expect(await simulate('claimWithSignature', [replay.rows, replay.authorizerSignature])).toBe('');
    const { channelId } = payloadChannel(payloads[1]!);
    expect((await readOnchainChannel(env.chain, channelId)).totalClaimed).toBe(PRICE * BigInt(CALLS));
  });

  it('settles the claimed sum to payTo in one transfer', async () => {
    const deposit = depositOf(payloads[0]!);
    const charged = PRICE * BigInt(CALLS);
    const before = await balance(env.payTo);
    const settled = await parties.manager.settle();
    expect(settled.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await balance(env.payTo)).toBe(before + charged);
    expect(await balance(BATCH_SETTLEMENT)).toBe(deposit - charged);
    expect(await readReceiverTotals(env.chain, env.payTo, env.token)).toEqual({
      totalClaimed: charged,
      totalSettled: charged,
    });
  });

  it('refunds the unspent rest of the escrow to the payer cooperatively, with the receiver authorizer signature', async () => {
    const { channelId } = payloadChannel(payloads[0]!);
    const refunds = await parties.manager.refund([channelId]);
    expect(refunds).toHaveLength(1);
    expect(await balance(alice.account.address)).toBe(START - PRICE * BigInt(CALLS));
    expect(await balance(BATCH_SETTLEMENT)).toBe(0n);
    expect(await readOnchainChannel(env.chain, channelId)).toMatchObject({
      balance: PRICE * BigInt(CALLS),
      totalClaimed: PRICE * BigInt(CALLS),
      refundNonce: 1n,
    });
  });

  it('takes a Permit2 deposit through the Permit2 collector and refunds its unspent rest', async () => {
    const carol = batchPayer(env, env.payers[2]!);
    await approvePermit2(env.chain, env.token, carol.account);
    const permit2Parties = await startBatchParties(env, PRICE, { assetTransferMethod: 'permit2' });
    const first = (await paidCall(permit2Parties, carol)).payload;
    await paidCall(permit2Parties, carol);
    const auth = (first.payload as { deposit: { authorization: { permit2Authorization?: { spender: string } } } })
      .deposit.authorization.permit2Authorization;
    expect(auth?.spender).toBe(PERMIT2_DEPOSIT_COLLECTOR);
    const deposit = depositOf(first);
    const escrowBefore = await balance(BATCH_SETTLEMENT);
    expect(await balance(carol.account.address)).toBe(START - deposit);
    expect(await balance(PERMIT2)).toBe(0n);
    const { channelId } = payloadChannel(first);
    expect(await permit2Parties.manager.refund([channelId])).toHaveLength(1);
    expect(await balance(carol.account.address)).toBe(START - PRICE * 2n);
    expect(await balance(BATCH_SETTLEMENT)).toBe(escrowBefore - (deposit - PRICE * 2n));
    expect(await readOnchainChannel(env.chain, channelId)).toMatchObject({
      balance: PRICE * 2n,
      totalClaimed: PRICE * 2n,
    });
  });

  it('returns unclaimed escrow to the payer by timed withdrawal, only after the withdraw delay', async () => {
    const bob = batchPayer(env, env.payers[1]!);
    const first = (await paidCall(parties, bob)).payload;
    await paidCall(parties, bob);
    const { channelId, config } = payloadChannel(first);
    const deposit = depositOf(first);
    expect(await balance(bob.account.address)).toBe(START - deposit);
    const bobKey = env.chain.accounts.find((a) => a.address === bob.account.address)!.privateKey;
    expect(await simulate('initiateWithdraw', [config, deposit])).toContain('Unauthorized');
    const wallet = chainWallet(env.chain, bob.account);
    const send = async (functionName: 'initiateWithdraw' | 'finalizeWithdraw', args: readonly unknown[]) => {
      const hash = await wallet.writeContract({
        address: BATCH_SETTLEMENT,
        abi: batchSettlementWithdrawAbi,
        functionName,
        args: args as never,
      });
      return (await wallet.waitForTransactionReceipt({ hash })).status;
    };
    expect(await send('initiateWithdraw', [config, deposit])).toBe('success');
    expect(await simulate('finalizeWithdraw', [config], bobKey)).toContain('WithdrawDelayNotElapsed');
    await advanceChainTime(env.chain, 900);
    expect(await send('finalizeWithdraw', [config])).toBe('success');
    expect(await balance(bob.account.address)).toBe(START);
    expect(await readOnchainChannel(env.chain, channelId)).toMatchObject({ balance: 0n, withdrawAmount: 0n });
  });
});
