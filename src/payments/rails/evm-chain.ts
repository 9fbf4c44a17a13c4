import { toFacilitatorEvmSigner } from '@x402/evm';
import { createPublicClient, createWalletClient, defineChain, http, publicActions, type Chain, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { evmChainId, type NetworkEntry } from '../networks.js';
import type { LookupResult, PendingSettlement } from './rail.js';

/** A viem chain definition for a network entry of the EVM family (its id and RPC URL). */
export function evmChain(net: NetworkEntry): Chain {
  const rpcUrl = net.rpcUrl ?? '';
  return defineChain({
    id: evmChainId(net.id),
    name: net.label ?? net.id,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

/** The tail of each sender's queue of transactions being signed and sent, per `address:chainId`. */
const sending = new Map<string, Promise<unknown>>();

/**
 * Runs `send` after every earlier send of the same account on the same chain has been handed to the node, so
 * each one reads the pending nonce after the previous transaction counts: concurrent settlements from this
 * process never collide. (Waiting for receipts is not serialised.) Instances sharing one key still can: give
 * each instance its own key, or share a remote facilitator.
 */
function oneAtATime<T>(sender: string, send: () => Promise<T>): Promise<T> {
  const previous = sending.get(sender) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(send);
  sending.set(sender, next);
  void next.finally(() => {
    if (sending.get(sender) === next) sending.delete(sender);
  }).catch(() => undefined);
  return next;
}

/** Builds the official facilitator signer for one EVM chain from a settlement key and an RPC URL. */
export function createEvmFacilitatorSigner(key: `0x${string}`, chain: Chain, rpcUrl: string, confirmationTimeoutMs: number) {
  const account = privateKeyToAccount(key);
  const sender = `${account.address}:${chain.id}`;
  const client = createWalletClient({ account, chain, transport: http(rpcUrl, { retryCount: 1, retryDelay: 100 }) }).extend(publicActions);
  return toFacilitatorEvmSigner(
    {
      address: account.address,
      readContract: (args) => client.readContract(args as never),
      verifyTypedData: (args) => client.verifyTypedData(args as never),
      writeContract: (args) => oneAtATime(sender, () => client.writeContract({ ...(args as object), chain, account } as never)),
      sendTransaction: (args) => oneAtATime(sender, () => client.sendTransaction({ ...(args as object), chain, account } as never)),
      waitForTransactionReceipt: (args) => client.waitForTransactionReceipt(args as never),
      getCode: (args) => client.getCode(args as never),
    } as Parameters<typeof toFacilitatorEvmSigner>[0],
    { confirmationTimeoutMs },
  );
}

/** The facilitator signer for a network entry, or undefined when the entry has no RPC URL. */
export function evmSignerFor(net: NetworkEntry, key: `0x${string}`, confirmationTimeoutMs: number) {
  if (!net.rpcUrl) return undefined;
  return createEvmFacilitatorSigner(key, evmChain(net), net.rpcUrl, confirmationTimeoutMs);
}

/**
 * Reconciliation shared by the EVM rails: the chain's answer for a known transaction, else `onChainState`
 * (what the authorization's own single-use record says); `pending` when the entry has no RPC URL.
 */
export async function evmLookup(
  pending: PendingSettlement,
  net: NetworkEntry,
  onChainState: (client: PublicClient) => Promise<LookupResult>,
): Promise<LookupResult> {
  if (!net.rpcUrl) return { type: 'pending' };
  const client = createPublicClient({ chain: evmChain(net), transport: http(net.rpcUrl, { retryCount: 1 }) }) as PublicClient;
  if (pending.transaction) {
    const receipt = await client.getTransactionReceipt({ hash: pending.transaction as Hex }).catch(() => undefined);
    if (receipt) return receipt.status === 'success' ? { type: 'settled', transaction: pending.transaction } : { type: 'failed', reason: 'transaction_reverted' };
  }
  return onChainState(client);
}
