/**
 * Reconciliation of an EIP-3009 payment (`exact` on EVM, both protocol versions): the token's own record of the
 * authorization, and the transaction that used it, found by its `AuthorizationUsed(authorizer, nonce)` log.
 */
import { pad, toEventSelector, type Hex, type PublicClient } from 'viem';
import type { NetworkEntry } from '../../../shared/networks.js';
import { AUTHORIZATION_STATE_ABI } from '../../../shared/evm-abi.js';
import type { LookupResult, PendingSettlement } from '../rail.js';
import { evmLookup } from './chain.js';
import { expired, findLogs, searchFrom, validityWindow } from './history.js';

/** Topic of EIP-3009's `AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)`. */
export const AUTHORIZATION_USED = toEventSelector('AuthorizationUsed(address,bytes32)');
/** Topic of EIP-3009's `AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)`. */
export const AUTHORIZATION_CANCELED = toEventSelector('AuthorizationCanceled(address,bytes32)');

interface Authorization {
  from: Hex;
  nonce: Hex;
  validAfter: bigint;
  validBefore: bigint;
}

const UINT = /^\d{1,78}$/;

function authorizationOf(pending: PendingSettlement): Authorization | undefined {
  const auth = (pending.payload.payload as { authorization?: Record<string, unknown> } | undefined)?.authorization;
  const { from, nonce } = auth ?? {};
  const after = String(auth?.validAfter ?? '');
  const before = String(auth?.validBefore ?? '');
  if (typeof from !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(from)) return undefined;
  if (typeof nonce !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(nonce)) return undefined;
  if (!UINT.test(after) || !UINT.test(before)) return undefined;
  return { from: from as Hex, nonce: nonce as Hex, validAfter: BigInt(after), validBefore: BigInt(before) };
}

/**
 * What the chain says about a used authorization: the transaction of its `AuthorizationUsed` log (the signature
 * binds payer, recipient and value, so that transaction is this very payment), `failed` when it was cancelled,
 * else pending with the blocks searched in vain.
 */
async function usedBy(
  client: PublicClient,
  asset: Hex,
  auth: Authorization,
  claimedAt?: string,
): Promise<LookupResult> {
  const window = await validityWindow(client, searchFrom(auth.validAfter, claimedAt), auth.validBefore);
  const topics = [[AUTHORIZATION_USED, AUTHORIZATION_CANCELED], pad(auth.from), auth.nonce] as (Hex | Hex[])[];
  const log = await findLogs(client, asset, topics, window);
  if (log?.topics[0] === AUTHORIZATION_USED) return { type: 'settled', transaction: log.transactionHash };
  if (log) return { type: 'failed', reason: 'authorization_canceled' };
  const blocks = `${window.fromBlock}–${window.toBlock}${window.truncated ? ', the search limit' : ''}`;
  return {
    type: 'pending',
    reason: `the token says the authorization was used, but no AuthorizationUsed log for it was found in blocks ${blocks}`,
  };
}

/**
 * Reconciliation of an EIP-3009 payment: the known transaction's receipt; else `authorizationState` — used → the
 * transaction of its log (never a settlement without one), unused and past `validBefore` at the head block (or a
 * minute past it on our clock) → failed, unused and still valid → pending.
 */
export function lookupEip3009(pending: PendingSettlement, net: NetworkEntry): Promise<LookupResult> {
  return evmLookup(pending, net, async (client) => {
    const auth = authorizationOf(pending);
    if (!auth) return { type: 'failed', reason: 'invalid_payment' };
    const asset = pending.requirements.asset as Hex;
    const head = await client.getBlock(); // read first: unused at a later block and expired at this one is final
    const used = await client.readContract({
      address: asset,
      abi: AUTHORIZATION_STATE_ABI,
      functionName: 'authorizationState',
      args: [auth.from, auth.nonce],
    });
    if (used) return usedBy(client, asset, auth, pending.claimedAt);
    if (expired(auth.validBefore, head)) return { type: 'failed', reason: 'authorization_expired_unused' };
    return { type: 'pending', reason: `the authorization is unused and valid until ${auth.validBefore} (Unix time)` };
  });
}
