/**
 * ERC-20 transfers of one wallet, newest first, from the chain's JSON-RPC (chunked `eth_getLogs`,
 * docs/spec-notes.md#erc-20-transfers-over-json-rpc) or from the indexer when one is configured
 * (docs/spec-notes.md#transfer-indexer). Either way the answer covers its block range completely: every transfer in
 * [fromBlock, toBlock] of the answer is listed (see {@link cutToLimit}), so a caller pages back with `toBlock =
 * fromBlock - 1`.
 */
import { formatUnits, getAddress } from 'viem';
import { ToolError } from '../../shared/errors.js';
import { isRangeTooLarge, type EvmReader, type RawLog } from './evm-rpc.js';
import type { IndexedTransfer, TransferIndexer } from './indexer.js';

/** The query of transfers-evm after parsing. */
export interface TransfersQuery {
  address: string;
  token?: string | undefined;
  fromBlock?: number | undefined;
  toBlock?: number | undefined;
  limit: number;
}

/** One transfer as transfers-evm returns it. */
export interface TransferRow {
  hash: string;
  blockNumber: number;
  timestamp: string;
  from: string;
  to: string;
  token: string;
  symbol: string | null;
  decimals: number | null;
  value: string;
  formatted: string | null;
  direction: 'in' | 'out' | 'self';
}

/** The answer: the range it covers completely and the transfers in it, newest first. */
export interface TransfersPage {
  fromBlock: number;
  toBlock: number;
  transfers: TransferRow[];
}

/** A transfer before enrichment (symbol, decimals, time). */
export interface FoundTransfer {
  hash: string;
  logIndex: number;
  block: number;
  from: string;
  to: string;
  token: string;
  raw: bigint;
  /** Unix seconds when the source reported it. */
  time?: number;
  symbol?: string | null;
  decimals?: number | null;
}

/** Settings of the log scan. */
export interface ScanOptions {
  chunkBlocks: number;
  maxBlocks: number;
  /** Most `eth_getLogs` requests one call may make (bounds the cost of an RPC that only takes tiny ranges). */
  maxRequests?: number;
}

const newestFirst = (a: FoundTransfer, b: FoundTransfer) => b.block - a.block || b.logIndex - a.logIndex;

/**
 * Keeps at most `limit` transfers (newest first) and returns the lowest block the kept list covers completely: when
 * the cut falls inside a block, that block is left out entirely (unless it is the only one), so no block is half-listed.
 */
export function cutToLimit(
  found: FoundTransfer[],
  limit: number,
  coveredFrom: number,
): { kept: FoundTransfer[]; fromBlock: number } {
  const sorted = [...found].sort(newestFirst);
  if (sorted.length <= limit) return { kept: sorted, fromBlock: coveredFrom };
  const kept = sorted.slice(0, limit);
  const boundary = kept[limit - 1]!.block;
  if (sorted[limit]!.block !== boundary) return { kept, fromBlock: boundary };
  const whole = kept.filter((t) => t.block !== boundary);
  return whole.length > 0 ? { kept: whole, fromBlock: boundary + 1 } : { kept, fromBlock: boundary };
}

function fromLog(log: RawLog): FoundTransfer | undefined {
  // ERC-20 Transfer: three topics and a 32-byte amount (ERC-721 indexes the token id as a fourth topic).
  if (log.removed || log.topics.length !== 3 || !/^0x[0-9a-fA-F]{64}$/.test(log.data)) return undefined;
  return {
    hash: log.transactionHash,
    logIndex: Number(log.logIndex),
    block: Number(log.blockNumber),
    from: getAddress(`0x${log.topics[1]!.slice(26)}`),
    to: getAddress(`0x${log.topics[2]!.slice(26)}`),
    token: getAddress(log.address),
    raw: BigInt(log.data),
    ...(log.blockTimestamp ? { time: Number(log.blockTimestamp) } : {}),
  };
}

/** Scans [from, to] newest chunk first until `limit` transfers are found, halving the chunk on "range too large". */
export async function scanLogs(
  reader: EvmReader,
  query: { address: string; token?: string | undefined; limit: number },
  range: { from: number; to: number },
  options: ScanOptions,
  signal?: AbortSignal,
): Promise<{ found: FoundTransfer[]; coveredFrom: number; requests: number }> {
  const found = new Map<string, FoundTransfer>();
  let size = Math.max(1, options.chunkBlocks);
  let hi = range.to;
  let coveredFrom = range.to + 1;
  let requests = 0;
  const maxRequests = options.maxRequests ?? 400;
  const token = query.token ? { token: query.token } : {};
  while (hi >= range.from && found.size < query.limit) {
    const lo = Math.max(range.from, hi - size + 1);
    if (requests + 2 > maxRequests) break;
    requests += 2;
    let logs: RawLog[];
    try {
      const [sent, received] = await Promise.all([
        reader.transferLogs({ fromBlock: lo, toBlock: hi, ...token, from: query.address }, signal),
        reader.transferLogs({ fromBlock: lo, toBlock: hi, ...token, to: query.address }, signal),
      ]);
      logs = [...sent, ...received];
    } catch (err) {
      if (hi > lo && isRangeTooLarge(err)) {
        size = Math.ceil((hi - lo + 1) / 2);
        continue;
      }
      throw err;
    }
    for (const log of logs) {
      const t = fromLog(log);
      if (t) found.set(`${t.hash}:${t.logIndex}`, t);
    }
    coveredFrom = lo;
    hi = lo - 1;
  }
  if (coveredFrom > range.to) {
    throw new ToolError(
      'upstream_unavailable',
      `The ${reader.label} accepted no log query within ${maxRequests} requests; try a narrower block range later.`,
    );
  }
  return { found: [...found.values()], coveredFrom, requests };
}

function fromIndexed(t: IndexedTransfer): FoundTransfer | undefined {
  const { rawContract } = t;
  if (!rawContract.address || !rawContract.value || !t.to) return undefined;
  const logIndex = Number(/:log:(\d+)$/.exec(t.uniqueId)?.[1] ?? 0);
  const time = t.metadata ? Date.parse(t.metadata.blockTimestamp) / 1000 : undefined;
  return {
    hash: t.hash,
    logIndex,
    block: Number(BigInt(t.blockNum)),
    from: getAddress(t.from),
    to: getAddress(t.to),
    token: getAddress(rawContract.address),
    raw: BigInt(rawContract.value),
    ...(time !== undefined && Number.isFinite(time) ? { time } : {}),
    ...(t.asset !== undefined ? { symbol: t.asset } : {}),
    ...(rawContract.decimal ? { decimals: Number(BigInt(rawContract.decimal)) } : {}),
  };
}

/** Both directions from the indexer, newest `limit` each; returns what is covered completely. */
export async function fromIndexer(
  indexer: TransferIndexer,
  query: { address: string; token?: string | undefined; limit: number },
  range: { from: number; to: number },
  signal?: AbortSignal,
): Promise<{ found: FoundTransfer[]; coveredFrom: number }> {
  const ask = (direction: 'from' | 'to') =>
    indexer.transfers(
      {
        address: query.address,
        direction,
        ...(query.token ? { token: query.token } : {}),
        fromBlock: range.from,
        toBlock: range.to,
        maxCount: query.limit,
      },
      signal,
    );
  const pages = await Promise.all([ask('from'), ask('to')]);
  const found = new Map<string, FoundTransfer>();
  let coveredFrom = range.from;
  for (const page of pages) {
    const rows = page.transfers.map(fromIndexed).filter((t): t is FoundTransfer => t !== undefined);
    for (const t of rows) found.set(`${t.hash}:${t.logIndex}`, t);
    // A full page is complete above its oldest block only; that block may continue on the next page.
    if (page.more && rows.length > 0) coveredFrom = Math.max(coveredFrom, Math.min(...rows.map((t) => t.block)) + 1);
  }
  const all = [...found.values()];
  const complete = all.filter((t) => t.block >= coveredFrom);
  return complete.length > 0 || all.length === 0
    ? { found: complete, coveredFrom }
    : { found: all, coveredFrom: Math.min(...all.map((t) => t.block)) };
}

/** Fills in symbol, decimals and time, and shapes the rows. */
export async function enrich(
  reader: EvmReader,
  address: string,
  kept: FoundTransfer[],
  signal?: AbortSignal,
): Promise<TransferRow[]> {
  const me = address.toLowerCase();
  const tokens = [
    ...new Set(kept.filter((t) => t.symbol === undefined || t.decimals === undefined).map((t) => t.token)),
  ];
  const infos = new Map(
    await Promise.all(tokens.map(async (token) => [token, await reader.tokenInfo(token, signal)] as const)),
  );
  const blocks = [...new Set(kept.filter((t) => t.time === undefined).map((t) => t.block))];
  const times = new Map<number, number>();
  for (let i = 0; i < blocks.length; i += 8) {
    const batch = blocks.slice(i, i + 8);
    const got = await Promise.all(batch.map((b) => reader.blockTimestamp(b, signal)));
    batch.forEach((b, j) => times.set(b, got[j]!));
  }
  return kept.map((t) => {
    const info = infos.get(t.token);
    const symbol = t.symbol !== undefined ? t.symbol : (info?.symbol ?? null);
    const decimals = t.decimals !== undefined ? t.decimals : (info?.decimals ?? null);
    const from = t.from.toLowerCase();
    const to = t.to.toLowerCase();
    return {
      hash: t.hash,
      blockNumber: t.block,
      timestamp: new Date((t.time ?? times.get(t.block)!) * 1000).toISOString(),
      from: t.from,
      to: t.to,
      token: t.token,
      symbol,
      decimals,
      value: t.raw.toString(),
      formatted: decimals === null ? null : formatUnits(t.raw, decimals),
      direction: from === me && to === me ? 'self' : from === me ? 'out' : 'in',
    };
  });
}

/** Where transfers come from for one chain: its RPC reader and, when configured, the indexer. */
export interface TransferSources {
  reader: EvmReader;
  indexer?: TransferIndexer | undefined;
  scan: ScanOptions;
}

/** Lists a wallet's transfers: the indexer when configured, else a chunked log scan of at most `maxBlocks` blocks. */
export async function listTransfers(
  sources: TransferSources,
  query: TransfersQuery,
  signal?: AbortSignal,
): Promise<TransfersPage> {
  const { reader, indexer } = sources;
  const latest = indexer ? await indexer.latestBlock(signal) : await reader.blockNumber(signal);
  if (query.fromBlock !== undefined && query.fromBlock > latest) {
    throw new ToolError(
      'invalid_input',
      `fromBlock ${query.fromBlock} is after the latest block (${latest}); lower it.`,
      {
        field: 'fromBlock',
      },
    );
  }
  const to = Math.min(query.toBlock ?? latest, latest);
  const requested = query.fromBlock ?? 0;
  let result: { found: FoundTransfer[]; coveredFrom: number };
  if (indexer) {
    result = await fromIndexer(indexer, query, { from: requested, to }, signal);
  } else {
    const from = Math.max(requested, to - sources.scan.maxBlocks + 1);
    result = await scanLogs(reader, query, { from, to }, sources.scan, signal);
  }
  const { kept, fromBlock } = cutToLimit(result.found, query.limit, result.coveredFrom);
  const transfers = await enrich(reader, query.address, kept, signal);
  return { fromBlock, toBlock: to, transfers };
}
