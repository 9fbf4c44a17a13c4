import type { NetworkEntry } from './networks.js';
import { algorandNetworkKind, paymentTxnOf } from './algorand-txns.js';
import type { LookupResult, PendingSettlement } from './chain-lookup.js';

/** AlgoNode's public algod per network: the default of the official `@x402/avm` facilitator signer. */
export const DEFAULT_ALGOD_URLS = {
  mainnet: 'https://mainnet-api.algonode.cloud',
  testnet: 'https://testnet-api.algonode.cloud',
} as const;

/** The algod a network entry settles on: its `rpcUrl`, else the official default for mainnet/testnet. */
export function algodUrlFor(net: NetworkEntry): string | undefined {
  if (net.rpcUrl) return net.rpcUrl.replace(/\/+$/, '');
  const kind = algorandNetworkKind(net.id);
  return kind ? DEFAULT_ALGOD_URLS[kind] : undefined;
}

async function getJson(
  base: string,
  path: string,
  timeoutMs: number,
): Promise<{ status: number; body?: Record<string, unknown> }> {
  const res = await fetch(base + path, {
    headers: { accept: 'application/json' },
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) {
    await res.body?.cancel();
    return { status: res.status };
  }
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** True when algod reports the txid confirmed (false when it does not, or cannot be asked). */
export async function isConfirmed(base: string, txid: string, timeoutMs: number): Promise<boolean> {
  try {
    const info = await getJson(base, `/v2/transactions/pending/${txid}`, timeoutMs);
    return Number(info.body?.['confirmed-round'] ?? 0) > 0;
  } catch {
    return false;
  }
}

const SCAN_BATCH = 10;

/** True when one of the rounds holds the txid; undefined when algod could not say for some round. */
async function inBlocks(
  base: string,
  txid: string,
  first: bigint,
  last: bigint,
  timeoutMs: number,
): Promise<boolean | undefined> {
  for (let start = first; start <= last; start += BigInt(SCAN_BATCH)) {
    const rounds: bigint[] = [];
    for (let r = start; r <= last && r < start + BigInt(SCAN_BATCH); r++) rounds.push(r);
    const answers = await Promise.all(rounds.map((r) => getJson(base, `/v2/blocks/${r}/txids`, timeoutMs)));
    if (answers.some((a) => a.status !== 200)) return undefined;
    if (answers.some((a) => (a.body?.blockTxids as string[] | undefined)?.includes(txid))) return true;
  }
  return false;
}

/**
 * What became of an Algorand settlement whose outcome was unknown. Confirmed in algod's pending pool →
 * settled. While the payment's last valid round has not passed it may still land → pending. Afterwards the
 * txid can only be in a block of its validity window: found → settled, absent from every block → failed
 * (it can never be committed). Any answer algod cannot give (errors, pruned blocks) → pending.
 */
export async function lookupAlgorandPayment(
  pending: PendingSettlement,
  net: NetworkEntry,
  timeoutMs: number,
): Promise<LookupResult> {
  const txn = paymentTxnOf(pending.payload);
  if (!txn) return { type: 'failed', reason: 'invalid_payment' };
  const txid = txn.txID();
  const base = algodUrlFor(net);
  if (!base) return { type: 'pending' };
  try {
    const info = await getJson(base, `/v2/transactions/pending/${txid}`, timeoutMs);
    if (Number(info.body?.['confirmed-round'] ?? 0) > 0) return { type: 'settled', transaction: txid };
    if (info.status !== 200 && info.status !== 404) return { type: 'pending' };
    const status = await getJson(base, '/v2/status', timeoutMs);
    const lastRound = status.body?.['last-round'];
    if (lastRound === undefined || BigInt(lastRound as number) <= txn.lastValid) return { type: 'pending' };
    const found = await inBlocks(base, txid, txn.firstValid, txn.lastValid, timeoutMs);
    if (found === undefined) return { type: 'pending' };
    return found
      ? { type: 'settled', transaction: txid }
      : { type: 'failed', reason: 'transaction_expired_unsubmitted' };
  } catch {
    return { type: 'pending' };
  }
}
