/**
 * The transfer indexer: Alchemy's `alchemy_getAssetTransfers` (docs/spec-notes.md#transfer-indexer) over JSON-RPC, with
 * the API key in the `Authorization` header (never in the URL, so it never reaches a log line). One direction per call
 * (`fromAddress` and `toAddress` are ANDed), ERC-20 only, newest first, with block timestamps.
 */
import { z } from 'zod';
import { ToolError } from '../../shared/errors.js';
import type { Upstream } from '../upstream.js';

const hex = z.string().regex(/^0x[0-9a-fA-F]*$/);

const TransferSchema = z.object({
  blockNum: hex,
  uniqueId: z.string(),
  hash: z.string(),
  from: z.string(),
  to: z.string().nullable(),
  asset: z.string().nullable().optional(),
  rawContract: z.object({ value: hex.nullable(), address: z.string().nullable(), decimal: hex.nullable().optional() }),
  metadata: z.object({ blockTimestamp: z.string() }).optional(),
});

/** One transfer as the indexer reports it. */
export type IndexedTransfer = z.output<typeof TransferSchema>;

const JsonRpcSchema = z.object({
  result: z.object({ transfers: z.array(TransferSchema), pageKey: z.string().optional() }),
});
const BlockNumberSchema = z.object({ result: hex });

/** One page of an address's transfers in one direction. */
export interface IndexedPage {
  transfers: IndexedTransfer[];
  /** Set when older transfers exist beyond this page. */
  more: boolean;
}

/** The indexer's calls. */
export interface TransferIndexer {
  readonly label: string;
  latestBlock(signal?: AbortSignal): Promise<number>;
  /** The newest `maxCount` ERC-20 transfers from or to `address` in the block range. */
  transfers(
    query: {
      address: string;
      direction: 'from' | 'to';
      token?: string;
      fromBlock: number;
      toBlock: number;
      maxCount: number;
    },
    signal?: AbortSignal,
  ): Promise<IndexedPage>;
}

/** JSON-RPC errors arrive with HTTP 200; they are upstream failures, never an empty answer. */
function interpretRpc(label: string) {
  return (_status: number, json: unknown): ToolError | undefined => {
    const error = (json as { error?: { code?: number; message?: string } } | undefined)?.error;
    if (!error) return undefined;
    return new ToolError(
      'upstream_unavailable',
      `The ${label} refused the request${typeof error.code === 'number' ? ` (JSON-RPC error ${error.code})` : ''}. Try again later.`,
    );
  };
}

/** Creates the indexer client; `apiKey` goes in the Authorization header. */
export function createTransferIndexer(upstream: Upstream, apiKey: string): TransferIndexer {
  const { label } = upstream.info;
  const call = <S extends z.ZodType>(method: string, params: unknown[], schema: S, signal?: AbortSignal) =>
    upstream.request({
      method: 'POST',
      path: '',
      body: { jsonrpc: '2.0', id: 1, method, params },
      schema,
      ttlMs: 0,
      ...(signal ? { signal } : {}),
      headers: { authorization: `Bearer ${apiKey}` },
      interpret: interpretRpc(label),
    });
  return {
    label,
    latestBlock: async (signal) =>
      Number(BigInt((await call('eth_blockNumber', [], BlockNumberSchema, signal)).data.result)),
    async transfers(q, signal) {
      const params = {
        fromBlock: `0x${q.fromBlock.toString(16)}`,
        toBlock: `0x${q.toBlock.toString(16)}`,
        [q.direction === 'from' ? 'fromAddress' : 'toAddress']: q.address,
        ...(q.token ? { contractAddresses: [q.token] } : {}),
        category: ['erc20'],
        withMetadata: true,
        excludeZeroValue: false,
        maxCount: `0x${q.maxCount.toString(16)}`,
        order: 'desc',
      };
      const { data } = await call('alchemy_getAssetTransfers', [params], JsonRpcSchema, signal);
      return { transfers: data.result.transfers, more: data.result.pageKey !== undefined };
    },
  };
}
