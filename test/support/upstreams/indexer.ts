import { createPublicClient, erc20Abi, formatUnits, http, toHex, type Address, type Hex } from 'viem';
import { startLookalikeServer, type Lookalike, type LookalikeOptions } from './server.js';

const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/** The indexer look-alike and the `alchemy_getAssetTransfers` queries it answered. */
export interface IndexerLookalike extends Lookalike {
  queries: Array<Record<string, unknown>>;
}

interface Log {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  transactionHash: string;
  logIndex: string;
}

const pad = (a: string) => `0x${a.slice(2).toLowerCase().padStart(64, '0')}`;

type IndexerClient = ReturnType<typeof createPublicClient>;

/** The node's ERC-20 Transfer logs the query asks for (block range, one direction, contracts), oldest first. */
async function transferLogs(client: IndexerClient, q: Record<string, unknown>): Promise<Log[]> {
  const latest = await client.getBlockNumber({ cacheTime: 0 });
  const fromBlock = typeof q.fromBlock === 'string' ? q.fromBlock : '0x0';
  const toBlock = typeof q.toBlock === 'string' && q.toBlock !== 'latest' ? q.toBlock : toHex(latest);
  const contracts = Array.isArray(q.contractAddresses) ? (q.contractAddresses as string[]) : undefined;
  const topics = [
    TRANSFER_TOPIC,
    q.fromAddress ? pad(String(q.fromAddress)) : null,
    q.toAddress ? pad(String(q.toAddress)) : null,
  ];
  const logs = (
    (await client.request({
      method: 'eth_getLogs',
      params: [
        {
          fromBlock: fromBlock as Hex,
          toBlock: toBlock as Hex,
          topics: topics as never,
          ...(contracts ? { address: contracts as Address[] } : {}),
        },
      ],
    })) as unknown as Log[]
  )
    .filter((l) => l.topics.length === 3)
    .sort(
      (a, b) =>
        Number(BigInt(a.blockNumber) - BigInt(b.blockNumber)) || Number(BigInt(a.logIndex) - BigInt(b.logIndex)),
    );
  return logs;
}

/** One `alchemy_getAssetTransfers` row for a Transfer log: token symbol and decimals read from the chain. */
async function transferRow(client: IndexerClient, l: Log, withMetadata: boolean): Promise<Record<string, unknown>> {
  const token = l.address as Address;
  const [symbol, decimals, block] = await Promise.all([
    client.readContract({ address: token, abi: erc20Abi, functionName: 'symbol' }).catch(() => null),
    client.readContract({ address: token, abi: erc20Abi, functionName: 'decimals' }).catch(() => null),
    client.getBlock({ blockNumber: BigInt(l.blockNumber) }),
  ]);
  const raw = BigInt(l.data);
  return {
    blockNum: l.blockNumber,
    uniqueId: `${l.transactionHash}:log:${Number(BigInt(l.logIndex))}`,
    hash: l.transactionHash,
    from: `0x${l.topics[1]!.slice(26)}`,
    to: `0x${l.topics[2]!.slice(26)}`,
    value: decimals === null ? null : Number(formatUnits(raw, decimals)),
    asset: symbol,
    category: 'erc20',
    erc721TokenId: null,
    erc1155Metadata: null,
    tokenId: null,
    rawContract: {
      value: toHex(raw),
      address: token.toLowerCase(),
      decimal: decimals === null ? null : toHex(decimals),
    },
    ...(withMetadata ? { metadata: { blockTimestamp: new Date(Number(block.timestamp) * 1000).toISOString() } } : {}),
  };
}

/**
 * Starts an Alchemy-style indexer look-alike over a real local node: `alchemy_getAssetTransfers` (category erc20,
 * one direction, optional contracts, `order` desc/asc, `maxCount`, `pageKey`, `withMetadata`) answered from the
 * node's Transfer logs, token metadata and block times; other methods are forwarded. Requests must carry
 * `Authorization: Bearer <apiKey>`, as Alchemy's header authentication does, else HTTP 401.
 */
export async function startIndexerLookalike(
  target: string,
  apiKey: string,
  options: LookalikeOptions = {},
): Promise<IndexerLookalike> {
  const client = createPublicClient({ transport: http(target, { retryCount: 0 }) });
  const queries: Array<Record<string, unknown>> = [];
  const server = await startLookalikeServer(async (req, mode) => {
    const body = req.body as { id?: unknown; method?: string; params?: unknown[] };
    const id = body?.id ?? null;
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      return { status: 401, json: { jsonrpc: '2.0', id, error: { code: -32600, message: 'Must be authenticated!' } } };
    }
    if (mode === 'error200')
      return { json: { jsonrpc: '2.0', id, error: { code: -32603, message: 'indexer failure in the look-alike' } } };
    if (body.method !== 'alchemy_getAssetTransfers') {
      const res = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: req.rawBody,
      });
      return { status: res.status, json: (await res.json()) as unknown };
    }
    const q = (body.params?.[0] ?? {}) as Record<string, unknown>;
    queries.push(q);
    if (!Array.isArray(q.category) || !q.category.includes('erc20'))
      return { json: { jsonrpc: '2.0', id, error: { code: -32602, message: 'category is required' } } };
    const logs = await transferLogs(client, q);
    if (q.order !== 'asc') logs.reverse();
    const offset = typeof q.pageKey === 'string' ? Number(q.pageKey) : 0;
    const max = typeof q.maxCount === 'string' ? Number(BigInt(q.maxCount)) : 1000;
    const page = logs.slice(offset, offset + max);
    const transfers = await Promise.all(page.map((l) => transferRow(client, l, Boolean(q.withMetadata))));
    const more = offset + max < logs.length;
    return { json: { jsonrpc: '2.0', id, result: { transfers, ...(more ? { pageKey: String(offset + max) } : {}) } } };
  }, options);
  return Object.defineProperties(server, { queries: { value: queries } }) as IndexerLookalike;
}
