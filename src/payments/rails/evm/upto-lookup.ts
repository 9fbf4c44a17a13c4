/**
 * Reconciliation of a Permit2 `upto` payment. Permit2 emits no event when a witness transfer burns a nonce, and the
 * x402 upto proxy's `Settled()` names nothing, so the transaction is found through the token's
 * `Transfer(payer → pay-to)` logs in the authorization's window: the one whose call to the proxy carries this
 * owner and nonce is this payment.
 */
import { PERMIT2_ADDRESS, x402UptoPermit2ProxyABI, x402UptoPermit2ProxyAddress } from '@x402/evm';
import { decodeFunctionData, pad, toEventSelector, type Hex, type PublicClient } from 'viem';
import type { NetworkEntry } from '../../../shared/networks.js';
import { NONCE_BITMAP_ABI } from '../../../shared/evm-abi.js';
import type { LookupResult, PendingSettlement } from '../rail.js';
import { evmLookup } from './chain.js';
import { expired, findLogs, searchFrom, validityWindow, type FoundLog } from './history.js';

/** Topic of ERC-20 `Transfer(address indexed from, address indexed to, uint256 value)`. */
const TRANSFER = toEventSelector('Transfer(address,address,uint256)');
const UINT = /^\d{1,78}$/;

interface Permit2Payment {
  from: Hex;
  nonce: bigint;
  deadline: bigint;
  validAfter: bigint;
}

function permit2Of(pending: PendingSettlement): Permit2Payment | undefined {
  const auth = (pending.payload.payload as { permit2Authorization?: Record<string, unknown> } | undefined)
    ?.permit2Authorization;
  const witness = (auth?.witness ?? {}) as { validAfter?: unknown };
  const [nonce, deadline, after] = [auth?.nonce, auth?.deadline, witness.validAfter ?? '0'].map(String);
  if (typeof auth?.from !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(auth.from)) return undefined;
  if (!UINT.test(nonce!) || !UINT.test(deadline!) || !UINT.test(after!)) return undefined;
  return { from: auth.from as Hex, nonce: BigInt(nonce!), deadline: BigInt(deadline!), validAfter: BigInt(after!) };
}

/** True when the transaction is a call of the upto proxy's `settle` or `settleWithPermit` for this owner and nonce. */
async function carries(client: PublicClient, hash: Hex, auth: Permit2Payment): Promise<boolean> {
  const tx = await client.getTransaction({ hash });
  if (tx.to?.toLowerCase() !== x402UptoPermit2ProxyAddress.toLowerCase()) return false;
  try {
    const call = decodeFunctionData({ abi: x402UptoPermit2ProxyABI, data: tx.input });
    const args = call.args as readonly unknown[];
    const [permit, , owner] = call.functionName === 'settleWithPermit' ? args.slice(1) : args;
    return (
      (permit as { nonce?: bigint }).nonce === auth.nonce && String(owner).toLowerCase() === auth.from.toLowerCase()
    );
  } catch {
    return false;
  }
}

async function settledBy(
  client: PublicClient,
  pending: PendingSettlement,
  auth: Permit2Payment,
): Promise<LookupResult> {
  // Permit2 refuses a transfer once block.timestamp > deadline: it could land strictly before deadline + 1.
  const from = searchFrom(auth.validAfter, pending.claimedAt);
  const window = await validityWindow(client, from, auth.deadline + 1n);
  const topics = [TRANSFER, pad(auth.from), pad(pending.requirements.payTo as Hex)];
  const log = await findLogs(client, pending.requirements.asset as Hex, topics, window, async (logs: FoundLog[]) => {
    for (const found of [...logs].reverse()) if (await carries(client, found.transactionHash, auth)) return found;
    return undefined;
  });
  if (log) return { type: 'settled', transaction: log.transactionHash };
  return {
    type: 'pending',
    reason: `Permit2 says the nonce is used, but no transfer to the pay-to through the upto proxy carries it in blocks ${window.fromBlock}–${window.toBlock} (the payer may have invalidated it)`,
  };
}

/**
 * Reconciliation of an `upto` payment: the known transaction's receipt; else Permit2's `nonceBitmap` — burnt → the
 * proxy transaction that burnt it (never a settlement without one), unused past the deadline → failed, else pending.
 */
export function lookupPermit2(pending: PendingSettlement, net: NetworkEntry): Promise<LookupResult> {
  return evmLookup(pending, net, async (client) => {
    const auth = permit2Of(pending);
    if (!auth) return { type: 'failed', reason: 'invalid_payment' };
    const head = await client.getBlock();
    const bitmap = await client.readContract({
      address: PERMIT2_ADDRESS,
      abi: NONCE_BITMAP_ABI,
      functionName: 'nonceBitmap',
      args: [auth.from, auth.nonce >> 8n],
    });
    if ((bitmap >> (auth.nonce & 0xffn)) & 1n) return settledBy(client, pending, auth);
    if (expired(auth.deadline + 1n, head)) return { type: 'failed', reason: 'authorization_expired_unused' };
    return { type: 'pending', reason: `the Permit2 nonce is unused and valid until ${auth.deadline} (Unix time)` };
  });
}
