import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClientScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { createPublicClient } from 'viem';
import { generatePrivateKey, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChannelRecord } from '../../src/store/channels.js';
import { claimLoopForServer } from '../support/batch-claims.js';
import {
  BATCH_SETTLEMENT,
  advanceChainTime,
  batchSettlementWithdrawAbi,
  chainWallet,
  readOnchainChannel,
  type BatchSettlementEnvironment,
} from '../support/chain/batch-settlement.js';
import { BASE_NETWORK } from '../support/chain/batch-settlement-parties.js';
import { localTransport, localViemChain } from '../support/chain/token.js';
import type { HttpFacilitator } from '../support/http-facilitator.js';
import type { TestServer } from '../support/server.js';
import { startBatchTollbooth } from '../support/batch-tollbooth.js';
import { sideEffectTool } from '../support/tools.js';

const PRICE = 1000n; // $0.001 in USDC base units
const WITHDRAW_DELAY = 900;
const tool = sideEffectTool('batch-withdrawable', async () => undefined);
const authorizerKey = generatePrivateKey();

let env: BatchSettlementEnvironment;
let facilitator: HttpFacilitator;
let server: TestServer;
/** Set once the test stopped the seller and its facilitator itself. */
let gone = false;

beforeAll(async () => {
  ({ env, facilitator, server } = await startBatchTollbooth({
    payers: 2,
    price: PRICE,
    tools: [tool],
    authorizerKey,
    env: { BATCH_WITHDRAW_DELAY: String(WITHDRAW_DELAY) },
  }));
}, 120_000);

afterAll(async () => {
  if (!gone) await server?.close();
  if (!gone) await facilitator?.close();
  await env?.stop();
});

/** Pays `n` calls of the tool with `account`'s official client (its deposit: 10 calls, as the seller announces). */
async function payCalls(account: PrivateKeyAccount, n: number): Promise<void> {
  const reader = createPublicClient({ chain: localViemChain(env.chain), transport: localTransport(env.chain) });
  const client = new x402Client().register(BASE_NETWORK, new BatchClientScheme(toClientEvmSigner(account, reader)));
  const pay = wrapFetchWithPayment(fetch, client);
  for (let i = 0; i < n; i++) {
    const res = await pay(`${server.url}${tool.path}`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
  }
}

/** `account`'s channel as the server stored it. */
async function channelOf(account: PrivateKeyAccount): Promise<ChannelRecord> {
  const channels = await server.runtime.store.channels!.list();
  return channels.find((c) => c.channelConfig.payer.toLowerCase() === account.address.toLowerCase())!;
}

/** The payer's own escape hatch: starts a timed withdrawal of `amount`, waits the delay on chain, finishes it. */
async function withdrawAlone(account: PrivateKeyAccount, channel: ChannelRecord, amount: bigint): Promise<void> {
  const wallet = chainWallet(env.chain, account);
  const send = async (hash: Promise<`0x${string}`>) =>
    expect((await wallet.waitForTransactionReceipt({ hash: await hash })).status).toBe('success');
  const config = channel.channelConfig;
  const at = { address: BATCH_SETTLEMENT, abi: batchSettlementWithdrawAbi } as const;
  await send(wallet.writeContract({ ...at, functionName: 'initiateWithdraw', args: [config, amount] }));
  await advanceChainTime(env.chain, config.withdrawDelay);
  await send(wallet.writeContract({ ...at, functionName: 'finalizeWithdraw', args: [config] }));
}

describe('the payer’s timed withdrawal when the seller is gone', () => {
  it('returns the whole deposit when nothing was claimed, and exactly the unclaimed rest after a claim', async () => {
    const [alice, bob] = env.payers as [PrivateKeyAccount, PrivateKeyAccount];
    const start = { alice: await env.balance(alice.address), bob: await env.balance(bob.address) };
    // Bob pays three calls, the seller claims and settles them, then Bob pays two more that are never claimed.
    await payCalls(bob, 3);
    const loop = await claimLoopForServer(env, authorizerKey, server.runtime.store, facilitator.url);
    expect((await loop.tick())![0]).toMatchObject({ claimed: 3n * PRICE, failures: [] });
    await payCalls(bob, 2);
    // Alice pays three calls that are never claimed.
    await payCalls(alice, 3);
    const channels = { alice: await channelOf(alice), bob: await channelOf(bob) };
    expect(channels.bob.channelConfig.withdrawDelay).toBe(WITHDRAW_DELAY);

    // The seller and its facilitator disappear.
    await server.close();
    await facilitator.close();
    gone = true;

    for (const [who, account] of [
      ['alice', alice],
      ['bob', bob],
    ] as const) {
      const onchain = await readOnchainChannel(env.chain, channels[who].channelId as `0x${string}`);
      await withdrawAlone(account, channels[who], onchain.balance - onchain.totalClaimed);
    }
    // Alice gets everything back; Bob is short exactly the three claimed calls (his two unclaimed ones come back).
    expect(await env.balance(alice.address)).toBe(start.alice);
    expect(await env.balance(bob.address)).toBe(start.bob - 3n * PRICE);
    expect(await readOnchainChannel(env.chain, channels.bob.channelId as `0x${string}`)).toMatchObject({
      balance: 3n * PRICE,
      totalClaimed: 3n * PRICE,
      withdrawAmount: 0n,
    });
    expect(await env.balance(env.payTo)).toBeGreaterThanOrEqual(3n * PRICE);
  }, 120_000);
});
