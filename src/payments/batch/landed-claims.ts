/**
 * The claim transactions the escrow recorded for our receiver, read back from the chain: its `Claimed` events
 * (indexed by receiver) since a time, through the network's RPC, each transaction with the sum it claimed. The claim
 * loop uses them to name a claim a stopped process sent but never saw answered (./op-ledger.ts).
 */
import { BATCH_SETTLEMENT_ADDRESS } from '@x402/evm';
import { createPublicClient, http, pad, toEventSelector, type Hex, type PublicClient } from 'viem';
import type { NetworkEntry } from '../../shared/networks.js';
import { evmChain } from '../rails/evm/chain.js';
import { CLAIM_CLOCK_SKEW_SECONDS, findLogs, validityWindow, type FoundLog } from '../rails/evm/history.js';

/** One claim transaction, what it claimed for the receiver (token base units) and the channels it claimed. */
export interface LandedClaim {
  transaction: string;
  amount: bigint;
  /** Lower-case channel ids. */
  channels: string[];
}

/** How long before the asked time the chain is searched (the chain's clock and ours may differ). */
export const LANDED_SEARCH_SKEW_MS = Number(CLAIM_CLOCK_SKEW_SECONDS) * 1000;

/** The claim transactions since `sinceMs` (epoch ms, searched from {@link LANDED_SEARCH_SKEW_MS} before it). */
export type LandedClaims = (sinceMs: number) => Promise<LandedClaim[]>;

const CLAIMED = toEventSelector('Claimed(bytes32,address,uint128,uint128)');
/** Later than any block: the search runs to the head. */
const NO_END = 2n ** 62n;

/** The `Claimed` logs of one transaction summed: the event's data is (uint128 amount, uint128 totalClaimed). */
function byTransaction(logs: readonly FoundLog[]): LandedClaim[] {
  const claims = new Map<string, LandedClaim>();
  for (const log of logs) {
    const transaction = log.transactionHash.toLowerCase();
    const claim = claims.get(transaction) ?? { transaction, amount: 0n, channels: [] };
    claim.amount += log.data && log.data.length >= 66 ? BigInt(log.data.slice(0, 66)) : 0n;
    if (log.topics[1]) claim.channels.push(log.topics[1].toLowerCase());
    claims.set(transaction, claim);
  }
  return [...claims.values()];
}

/** The landed claims of `receiver` on a network, or undefined when the network has no RPC URL to ask. */
export function landedClaimsOn(net: NetworkEntry, receiver: string): LandedClaims | undefined {
  if (!net.rpcUrl) return undefined;
  const client = createPublicClient({
    chain: evmChain(net),
    transport: http(net.rpcUrl, { retryCount: 1 }),
  }) as PublicClient;
  const topics = [CLAIMED, null, pad(receiver.toLowerCase() as Hex, { size: 32 })];
  return async (sinceMs) => {
    const since = BigInt(Math.floor((sinceMs - LANDED_SEARCH_SKEW_MS) / 1000));
    const window = await validityWindow(client, since > 0n ? since : 0n, NO_END);
    const logs: FoundLog[] = [];
    await findLogs(client, BATCH_SETTLEMENT_ADDRESS as Hex, topics, window, async (found) => {
      logs.push(...found);
      return undefined;
    });
    return byTransaction(logs);
  };
}
