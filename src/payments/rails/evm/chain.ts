import type { SchemeNetworkFacilitator } from '@x402/core/types';
import { toFacilitatorEvmSigner, type FacilitatorEvmSigner } from '@x402/evm';
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
  publicActions,
  type Chain,
  type Hex,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { evmChainId, type NetworkEntry } from '../../../shared/networks.js';
import { GuardedEvmScheme, KnownContracts, noteEvmFailure } from './guard.js';
import { settlementTransport, UnansweredSends } from './send.js';
import type { LookupResult, PendingSettlement } from '../rail.js';

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
  void next
    .finally(() => {
      if (sending.get(sender) === next) sending.delete(sender);
    })
    .catch(() => undefined);
  return next;
}

/** Wraps a signer method so an RPC failure is recorded in the current facilitator call (see evm-guard.ts) before it propagates. */
function traced<A, R>(call: (args: A) => Promise<R>): (args: A) => Promise<R> {
  return async (args) => {
    try {
      return await call(args);
    } catch (err) {
      noteEvmFailure(err);
      throw err;
    }
  };
}

/**
 * The official facilitator signer for one EVM chain from a settlement key and an RPC URL, and the known contracts
 * its `getCode` answers from without asking the RPC (the asset check of @x402/evm must never fail unobserved).
 */
export function evmFacilitatorSigner(
  key: `0x${string}`,
  chain: Chain,
  rpcUrl: string,
  confirmationTimeoutMs: number,
): { signer: FacilitatorEvmSigner; contracts: KnownContracts } {
  const account = privateKeyToAccount(key);
  const sender = `${account.address}:${chain.id}`;
  const unanswered = new UnansweredSends();
  const client = createWalletClient({
    account,
    chain,
    transport: settlementTransport(chain, rpcUrl, (hash, raw) => unanswered.add(hash, raw)),
  }).extend(publicActions);
  const contracts = new KnownContracts((address) =>
    client.request({ method: 'eth_getCode', params: [address, 'latest'] } as never),
  );
  const getCode = traced((args: { address: Hex }) => client.getCode(args));
  const signer = toFacilitatorEvmSigner(
    {
      address: account.address,
      readContract: traced((args) => client.readContract(args as never)),
      verifyTypedData: traced((args) => client.verifyTypedData(args as never)),
      writeContract: traced((args) =>
        oneAtATime(sender, () => client.writeContract({ ...(args as object), chain, account } as never)),
      ),
      sendTransaction: traced((args) =>
        oneAtATime(sender, () => client.sendTransaction({ ...(args as object), chain, account } as never)),
      ),
      waitForTransactionReceipt: traced(async (args: { hash: Hex }) => {
        const raw = unanswered.get(args.hash);
        // Sent again before waiting (in the sender's queue): see `UnansweredSends`. Its own outcome does not matter.
        if (raw)
          await oneAtATime(sender, () => client.sendRawTransaction({ serializedTransaction: raw })).catch(
            () => undefined,
          );
        const receipt = await client.waitForTransactionReceipt(args as never);
        unanswered.delete(args.hash);
        return receipt;
      }),
      getCode: (args: { address: Hex }) => {
        const known = contracts.codeOf(args.address);
        return known ? Promise.resolve(known) : getCode(args);
      },
    } as Parameters<typeof toFacilitatorEvmSigner>[0],
    { confirmationTimeoutMs },
  );
  return { signer, contracts };
}

/** Builds the official facilitator signer for one EVM chain from a settlement key and an RPC URL. */
export function createEvmFacilitatorSigner(
  key: `0x${string}`,
  chain: Chain,
  rpcUrl: string,
  confirmationTimeoutMs: number,
): FacilitatorEvmSigner {
  return evmFacilitatorSigner(key, chain, rpcUrl, confirmationTimeoutMs).signer;
}

/**
 * An official facilitator scheme (`build` gets our signer) for a network entry, behind `GuardedEvmScheme`, so a
 * failing RPC ends the call with an error and never the process; undefined when the entry has no RPC URL.
 */
export function guardedEvmScheme(
  net: NetworkEntry,
  key: `0x${string}`,
  confirmationTimeoutMs: number,
  build: (signer: FacilitatorEvmSigner) => SchemeNetworkFacilitator,
): SchemeNetworkFacilitator | undefined {
  if (!net.rpcUrl) return undefined;
  const { signer, contracts } = evmFacilitatorSigner(key, evmChain(net), net.rpcUrl, confirmationTimeoutMs);
  return new GuardedEvmScheme(build(signer), contracts);
}

/**
 * Reconciliation shared by the EVM rails: the chain's answer for a known transaction, else `onChainState`
 * (what the authorization's own single-use record says, and the transaction that used it); `pending` when the entry
 * has no RPC URL.
 */
export async function evmLookup(
  pending: PendingSettlement,
  net: NetworkEntry,
  onChainState: (client: PublicClient) => Promise<LookupResult>,
): Promise<LookupResult> {
  if (!net.rpcUrl) return { type: 'pending' };
  const client = createPublicClient({
    chain: evmChain(net),
    transport: http(net.rpcUrl, { retryCount: 1 }),
  }) as PublicClient;
  if (pending.transaction) {
    const receipt = await client.getTransactionReceipt({ hash: pending.transaction as Hex }).catch(() => undefined);
    if (receipt?.status === 'success') return { type: 'settled', transaction: pending.transaction };
    if (receipt) {
      // Reverted: another transaction may have used the authorization first (then that one is the settlement).
      const state = await onChainState(client);
      return state.type === 'pending' ? { type: 'failed', reason: 'transaction_reverted' } : state;
    }
  }
  return onChainState(client);
}
