/**
 * Finding the transaction that used an EVM authorization after the fact: the block window its validity allows, and
 * the event logs in that window, newest first, in ranges the RPC accepts (reconciliation, docs/payments.md).
 */
import { numberToHex, type Hex, type PublicClient } from 'viem';

/** How far back from the head a search may reach, in blocks (Base: ~11 days; Ethereum: ~70 days). */
export const MAX_LOOKBACK_BLOCKS = 500_000n;
/** A local clock this far past an expiry decides it even if the head block is older (an idle chain). */
export const EXPIRY_CLOCK_SKEW_SECONDS = 60n;
/** How often a range the RPC refuses is halved before the search gives up. */
const MAX_SPLITS = 16;

/** How long before its claim a payment's transaction is still looked for (clock skew between us and the chain). */
export const CLAIM_CLOCK_SKEW_SECONDS = 600n;

/**
 * The earliest time (Unix seconds) a payment's transaction can carry: after `validAfter`, and not long before it was
 * claimed here (we settle only after the claim), so an authorization valid from 0 is not searched back to genesis.
 */
export function searchFrom(validAfter: bigint, claimedAt?: string): bigint {
  const claimed = claimedAt ? Date.parse(claimedAt) : NaN;
  if (Number.isNaN(claimed)) return validAfter;
  const since = BigInt(Math.floor(claimed / 1000)) - CLAIM_CLOCK_SKEW_SECONDS;
  return since > validAfter ? since : validAfter;
}

/** A block's number and timestamp. */
interface BlockMark {
  number: bigint;
  timestamp: bigint;
}

/** Blocks to search, newest last; `truncated` when the window reaches further back than {@link MAX_LOOKBACK_BLOCKS}. */
export interface BlockWindow {
  fromBlock: bigint;
  toBlock: bigint;
  head: BlockMark;
  truncated: boolean;
}

/** One log as `eth_getLogs` returns it (the fields used here). */
export interface FoundLog {
  topics: Hex[];
  data?: Hex;
  transactionHash: Hex;
  blockNumber: Hex;
}

async function mark(client: PublicClient, number?: bigint): Promise<BlockMark> {
  const block = number === undefined ? await client.getBlock() : await client.getBlock({ blockNumber: number });
  return { number: block.number!, timestamp: block.timestamp };
}

/**
 * The last block known to have a timestamp at most `time` (interpolating between `lo` and `hi`, a few steps): an
 * earlier block than the exact one is fine, since a wider search finds the same logs.
 */
async function blockAtOrBefore(client: PublicClient, time: bigint, lo: BlockMark, hi: BlockMark): Promise<BlockMark> {
  if (hi.timestamp <= time) return hi;
  for (let step = 0; step < 8 && hi.number - lo.number > 1n; step++) {
    const span = hi.timestamp - lo.timestamp;
    const guess = span > 0n ? lo.number + ((time - lo.timestamp) * (hi.number - lo.number)) / span : lo.number + 1n;
    const at = await mark(client, guess <= lo.number ? lo.number + 1n : guess >= hi.number ? hi.number - 1n : guess);
    if (at.timestamp <= time) lo = at;
    else hi = at;
  }
  return lo;
}

/**
 * The blocks in which a transaction valid strictly after `validAfter` and strictly before `validBefore` (Unix
 * seconds) could have been mined, clipped to the head and to {@link MAX_LOOKBACK_BLOCKS}.
 */
export async function validityWindow(
  client: PublicClient,
  validAfter: bigint,
  validBefore: bigint,
): Promise<BlockWindow> {
  const head = await mark(client);
  const floorNumber = head.number > MAX_LOOKBACK_BLOCKS ? head.number - MAX_LOOKBACK_BLOCKS : 0n;
  const floor = await mark(client, floorNumber);
  const truncated = floor.timestamp > validAfter && floorNumber > 0n;
  const from = floor.timestamp > validAfter ? floor : await blockAtOrBefore(client, validAfter, floor, head);
  let toBlock = head.number;
  if (validBefore < head.timestamp && validBefore >= from.timestamp) {
    const last = await blockAtOrBefore(client, validBefore, from, head);
    toBlock = last.number < head.number ? last.number + 1n : head.number;
  }
  return { fromBlock: from.number, toBlock, head, truncated };
}

/** True once no future block can include a transaction valid only before `validBefore` (Unix seconds). */
export function expired(validBefore: bigint, head: BlockMark, nowMs = Date.now()): boolean {
  const now = BigInt(Math.floor(nowMs / 1000));
  return head.timestamp >= validBefore || now - EXPIRY_CLOCK_SKEW_SECONDS >= validBefore;
}

/**
 * The newest logs of `address` matching `topics` in the window, searched newest range first; a range the RPC
 * refuses (most limit the blocks or results of one query) is halved and asked again. Returns the first range's
 * matches that `accept` keeps, or none.
 */
export async function findLogs(
  client: PublicClient,
  address: Hex,
  topics: (Hex | Hex[] | null)[],
  window: Pick<BlockWindow, 'fromBlock' | 'toBlock'>,
  accept: (logs: FoundLog[]) => Promise<FoundLog | undefined> = async (logs) => logs.at(-1),
): Promise<FoundLog | undefined> {
  let size = window.toBlock - window.fromBlock + 1n;
  let splits = 0;
  for (let to = window.toBlock; to >= window.fromBlock;) {
    const from = to - size + 1n > window.fromBlock ? to - size + 1n : window.fromBlock;
    let logs: FoundLog[];
    try {
      logs = (await client.request({
        method: 'eth_getLogs',
        params: [{ address, topics, fromBlock: numberToHex(from), toBlock: numberToHex(to) }],
      } as never)) as FoundLog[];
    } catch (err) {
      if (size <= 1n || ++splits > MAX_SPLITS) throw err;
      size = (size + 1n) / 2n;
      continue;
    }
    const found = logs.length ? await accept(logs) : undefined;
    if (found) return found;
    to = from - 1n;
  }
  return undefined;
}
