/**
 * The payer's timed withdrawal from its batch-settlement channels (`tollbooth deposits --withdraw`), for a seller that
 * is gone and answers no cooperative refund. A first run starts it (`initiateWithdraw` of what the escrow holds
 * unclaimed, a transaction from the agent's EVM key, which pays its gas); a run once the channel's `withdrawDelay` has
 * passed on chain finishes it (`finalizeWithdraw`): the escrow sends back what is still unclaimed then (the seller may
 * claim the vouchers it holds meanwhile), and the budget gets back what it still counted as committed.
 */
import { BATCH_SETTLEMENT_ADDRESS } from '@x402/evm';
import { createPublicClient, createWalletClient, http, parseAbi, type Hex } from 'viem';
import type { AgentChannel } from '../shared/agent-channels.js';
import type { Logger } from '../shared/log.js';
import type { NetworkEntry } from '../shared/networks.js';
import type { BatchPayer } from './batch-pay.js';
import { rpcUrlOf } from './networks.js';
import type { Wallets } from './wallets.js';

const CONFIG =
  '(address payer, address payerAuthorizer, address receiver, address receiverAuthorizer, address token, uint40 withdrawDelay, bytes32 salt)';
/** The escrow's views and the payer's two withdrawal calls (@x402/evm's client never sends them). */
const escrowAbi = parseAbi([
  'function channels(bytes32 channelId) view returns (uint128 balance, uint128 totalClaimed)',
  'function pendingWithdrawals(bytes32 channelId) view returns (uint128 amount, uint40 initiatedAt)',
  `function initiateWithdraw(${CONFIG} config, uint128 amount)`,
  `function finalizeWithdraw(${CONFIG} config)`,
]);

/** What withdrawing from one channel did (amounts in the asset's smallest units; times ISO). */
export type WithdrawResult =
  | { channelId: string; started: string; readyAt: string; transaction: string }
  | { channelId: string; waiting: string; readyAt: string }
  | { channelId: string; withdrawn: string; transaction: string }
  | { channelId: string; failed: string };

/** What withdrawing runs on: the agent's channel book, its EVM key, the network table (RPC URLs) and log. */
export interface WithdrawDeps {
  batch?: BatchPayer;
  wallets: Wallets;
  networks: readonly NetworkEntry[];
  log: Logger;
}

/** Starts or finishes the timed withdrawal of every channel with money in escrow (or of `channelId` only). */
export async function withdrawChannels(deps: WithdrawDeps, channelId?: string): Promise<WithdrawResult[]> {
  if (!deps.batch) return [];
  const results: WithdrawResult[] = [];
  for (const channel of await deps.batch.book.list()) {
    if (channelId && channel.channelId !== channelId.toLowerCase()) continue;
    try {
      const result = await withdrawOne(deps, deps.batch, channel);
      if (result) results.push(result);
    } catch (err) {
      // Only the reason's first words: an RPC's text is not echoed.
      const reason = String((err as Error)?.message ?? err)
        .split(/[\n:]/, 1)[0]!
        .slice(0, 120);
      deps.log.warn('a batch-settlement withdrawal failed', { channelId: channel.channelId, reason });
      results.push({ channelId: channel.channelId, failed: reason });
    }
  }
  return results;
}

/** One channel's step: start, wait, or finish; undefined when the escrow holds nothing of it unclaimed. */
async function withdrawOne(
  deps: WithdrawDeps,
  batch: BatchPayer,
  channel: AgentChannel,
): Promise<WithdrawResult | undefined> {
  const { channelId, channelConfig: config, network } = channel;
  if (!config || !network) throw new Error('its channel configuration was not stored (paid before this version)');
  const rpcUrl = rpcUrlOf(deps.networks, network);
  if (!rpcUrl) throw new Error(`no RPC URL for ${network} in the network table`);
  const reader = createPublicClient({ transport: http(rpcUrl) });
  const wallet = createWalletClient({ account: deps.wallets.evmAccount(), transport: http(rpcUrl) });
  const at = { address: BATCH_SETTLEMENT_ADDRESS as Hex, abi: escrowAbi } as const;
  const id = channelId as Hex;
  const read = () =>
    Promise.all([
      reader.readContract({ ...at, functionName: 'channels', args: [id] }),
      reader.readContract({ ...at, functionName: 'pendingWithdrawals', args: [id] }),
    ]);
  const send = async (hash: Hex) => {
    const receipt = await reader.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error('the escrow reverted the transaction');
    return hash;
  };
  const [[balance, claimed], [pending, initiatedAt]] = await read();
  const unclaimed = balance - claimed;
  const readyAt = (initiated: number) => new Date((initiated + config.withdrawDelay) * 1000).toISOString();
  if (initiatedAt === 0) {
    if (unclaimed <= 0n) return undefined;
    const transaction = await send(
      await wallet.writeContract({ ...at, functionName: 'initiateWithdraw', args: [config, unclaimed], chain: null }),
    );
    const [, [, started]] = await read();
    return { channelId, started: unclaimed.toString(), readyAt: readyAt(started), transaction };
  }
  const { timestamp } = await reader.getBlock();
  if (timestamp < BigInt(initiatedAt + config.withdrawDelay))
    return { channelId, waiting: pending.toString(), readyAt: readyAt(initiatedAt) };
  const amount = pending < unclaimed ? pending : unclaimed;
  const transaction = await send(
    await wallet.writeContract({ ...at, functionName: 'finalizeWithdraw', args: [config], chain: null }),
  );
  // The budget gets back what the channel still had committed; the scheme's record of the channel is dropped, so a
  // later call reads the channel from the chain again.
  await batch.book.released(channelId, amount.toString(), 'withdrawn');
  await batch.book.delete(channelId);
  deps.log.info('withdrew from a batch-settlement channel', { channelId, amount: amount.toString() });
  return { channelId, withdrawn: amount.toString(), transaction };
}
