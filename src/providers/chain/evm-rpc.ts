/**
 * Read-only EVM JSON-RPC on viem (docs/spec-notes.md#wallet-reads): block number, native and ERC-20 balances, gas
 * price, raw `eth_getLogs` for Transfer events, block timestamps and token metadata. One client per RPC URL, with
 * the configured per-request timeout and viem's retries on retryable answers (429, 5xx, rate-limit codes).
 * Failures become ToolErrors.
 */
import {
  BaseError,
  createPublicClient,
  erc20Abi,
  hexToBigInt,
  http,
  HttpRequestError,
  RpcRequestError,
  TimeoutError,
  toHex,
  type PublicClient,
} from 'viem';
import { ToolError } from '../../shared/errors.js';
import { TtlLruCache } from '../cache.js';

/** `keccak256("Transfer(address,address,uint256)")`, topic 0 of every ERC-20 (and ERC-721) transfer. */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef' as const;

/** One log as the node returns it (hex quantities). */
export interface RawLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  transactionHash: string;
  logIndex: string;
  /** Some nodes add the block time (hex seconds); not guaranteed. */
  blockTimestamp?: string;
  removed?: boolean;
}

/** A Transfer-log query: a block range, optionally one token contract and the sender or the recipient. */
export interface TransferLogFilter {
  fromBlock: number;
  toBlock: number;
  token?: string;
  from?: string;
  to?: string;
}

/** Symbol and decimals of a token contract; null when the contract does not answer them. */
export interface TokenInfo {
  symbol: string | null;
  decimals: number | null;
}

/** Read-only access to one EVM chain over its JSON-RPC. */
export interface EvmReader {
  /** Human name used in error messages, e.g. "Base JSON-RPC". */
  readonly label: string;
  chainId(signal?: AbortSignal): Promise<number>;
  blockNumber(signal?: AbortSignal): Promise<number>;
  nativeBalance(address: string, signal?: AbortSignal): Promise<bigint>;
  tokenBalance(token: string, address: string, signal?: AbortSignal): Promise<bigint>;
  gasPrice(signal?: AbortSignal): Promise<bigint>;
  /** `eth_getLogs` for Transfer events in one block range (the caller chunks the range). */
  transferLogs(filter: TransferLogFilter, signal?: AbortSignal): Promise<RawLog[]>;
  /** Block time in unix seconds (cached). */
  blockTimestamp(block: number, signal?: AbortSignal): Promise<number>;
  /** Symbol and decimals (cached for a day). */
  tokenInfo(token: string, signal?: AbortSignal): Promise<TokenInfo>;
}

/** Connection settings of the readers. */
export interface EvmRpcOptions {
  timeoutMs: number;
  retries: number;
}

/** Texts public RPCs use to refuse a log query whose block range (or result) is too large (docs/spec-notes.md#erc-20-transfers-over-json-rpc). */
const RANGE_TOO_LARGE =
  /block range|range (is )?too (large|wide|big)|limit the query to|limited to a? ?\d|maximum block range|maximum is set to|exceeds? (the )?(max|limit)|query returned more than|too many (blocks|results|logs)|response size|logs? matched by query/i;

/** Every message and detail along a viem error's cause chain, joined (for matching node error texts). */
export function errorText(err: unknown): string {
  if (err instanceof BaseError) {
    const parts: string[] = [];
    err.walk((e) => {
      const b = e as { shortMessage?: string; details?: string; message?: string };
      parts.push(b.shortMessage ?? '', b.details ?? '');
      return false;
    });
    return parts.join(' | ');
  }
  return err instanceof Error ? err.message : String(err);
}

/** Whether a failed `eth_getLogs` says the range (or its result) was too large, so a smaller range may work. */
export function isRangeTooLarge(err: unknown): boolean {
  if (err instanceof ToolError) return RANGE_TOO_LARGE.test(String(err.details?.rpcMessage ?? ''));
  return RANGE_TOO_LARGE.test(errorText(err));
}

function found<T>(err: unknown, type: abstract new (...args: never[]) => T): T | undefined {
  if (!(err instanceof BaseError)) return undefined;
  return (err.walk((e) => e instanceof type) as T | null) ?? undefined;
}

/** Whether the failure is the transport's (network, HTTP, timeout) rather than the contract's answer. */
function isTransportFailure(err: unknown): boolean {
  return Boolean(found(err, HttpRequestError) ?? found(err, TimeoutError));
}

/** Maps a viem failure to the ToolError callers see (ToolErrors pass through). */
export function evmRpcError(err: unknown, label: string, timeoutMs: number): ToolError {
  if (err instanceof ToolError) return err;
  if (found(err, TimeoutError))
    return new ToolError(
      'upstream_timeout',
      `The ${label} did not answer within ${timeoutMs} ms. Try again in a minute.`,
    );
  const http = found(err, HttpRequestError);
  if (http?.status === 429)
    return new ToolError(
      'upstream_rate_limited',
      `The ${label} is rate-limiting requests right now. Try again in a minute.`,
    );
  if (http) {
    const why = http.status ? `HTTP ${http.status}` : 'network error';
    return new ToolError('upstream_unavailable', `The ${label} is unavailable (${why}). Try again in a minute.`);
  }
  const rpcMessage = errorText(err).slice(0, 300);
  // The node's own words are the `details` of the innermost viem error; its shortMessage is a generic category.
  const said = (found(err, RpcRequestError)?.details ?? rpcMessage.split(' | ')[0] ?? '')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 200);
  return new ToolError(
    'upstream_unavailable',
    `The ${label} refused the request (${said || 'JSON-RPC error'}). Try again later.`,
    {
      details: { rpcMessage },
      cause: err,
    },
  );
}

/** Rejects as soon as `signal` aborts (the request itself ends at its own timeout). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(new ToolError('cancelled', 'The call was cancelled.'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new ToolError('cancelled', 'The call was cancelled.'));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

const pad = (address: string): `0x${string}` => `0x${address.slice(2).toLowerCase().padStart(64, '0')}`;

/** Reads a value a contract may not have: null when it reverts or lacks the function, a transport failure throws. */
async function optionalRead<T>(work: () => Promise<T>): Promise<T | null> {
  try {
    return await work();
  } catch (err) {
    if (isTransportFailure(err)) throw err;
    return null; // the contract has no such function or reverted
  }
}

/** Raw `eth_getLogs` for Transfer events matching the filter. */
function requestTransferLogs(client: PublicClient, f: TransferLogFilter): Promise<RawLog[]> {
  return client.request({
    method: 'eth_getLogs',
    params: [
      {
        fromBlock: toHex(f.fromBlock),
        toBlock: toHex(f.toBlock),
        ...(f.token ? { address: f.token as `0x${string}` } : {}),
        topics: [TRANSFER_TOPIC, f.from ? pad(f.from) : null, f.to ? pad(f.to) : null],
      },
    ],
  }) as Promise<RawLog[]>;
}

/** A block's time in unix seconds, remembered for a day in `times`. */
async function readBlockTimestamp(
  client: PublicClient,
  times: TtlLruCache<number>,
  label: string,
  block: number,
): Promise<number> {
  const key = String(block);
  const known = times.get(key);
  if (known !== undefined) return known;
  const raw = (await client.request({ method: 'eth_getBlockByNumber', params: [toHex(block), false] })) as {
    timestamp?: `0x${string}`;
  } | null;
  if (!raw?.timestamp)
    throw new ToolError('upstream_invalid', `The ${label} does not know block ${block}. Try again in a minute.`);
  const seconds = Number(hexToBigInt(raw.timestamp));
  times.set(key, seconds, 24 * 3_600_000);
  return seconds;
}

/** A token's symbol and decimals (null where the contract does not answer), remembered for a day in `tokens`. */
async function readTokenInfo(client: PublicClient, tokens: TtlLruCache<TokenInfo>, token: string): Promise<TokenInfo> {
  const key = token.toLowerCase();
  const known = tokens.get(key);
  if (known) return known;
  const address = token as `0x${string}`;
  const [symbol, decimals] = await Promise.all([
    optionalRead(() => client.readContract({ address, abi: erc20Abi, functionName: 'symbol' })),
    optionalRead(() => client.readContract({ address, abi: erc20Abi, functionName: 'decimals' })),
  ]);
  const info = { symbol: symbol ?? null, decimals: decimals === null ? null : Number(decimals) };
  tokens.set(key, info, 24 * 3_600_000);
  return info;
}

/** Creates a reader for one RPC URL; `label` names it in error messages (the URL may hold a key: never shown). */
export function createEvmReader(url: string, label: string, options: EvmRpcOptions): EvmReader {
  const client: PublicClient = createPublicClient({
    transport: http(url, { timeout: options.timeoutMs, retryCount: options.retries, retryDelay: 250 }),
    cacheTime: 0,
  });
  const tokens = new TtlLruCache<TokenInfo>(1_000);
  const times = new TtlLruCache<number>(10_000);
  const run = async <T>(signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> => {
    try {
      return await abortable(work(), signal);
    } catch (err) {
      throw evmRpcError(err, label, options.timeoutMs);
    }
  };
  return {
    label,
    chainId: (signal) => run(signal, () => client.getChainId()),
    blockNumber: (signal) => run(signal, async () => Number(await client.getBlockNumber({ cacheTime: 0 }))),
    nativeBalance: (address, signal) => run(signal, () => client.getBalance({ address: address as `0x${string}` })),
    tokenBalance: (token, address, signal) =>
      run(signal, () =>
        client.readContract({
          address: token as `0x${string}`,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [address as `0x${string}`],
        }),
      ),
    gasPrice: (signal) => run(signal, () => client.getGasPrice()),
    transferLogs: (f, signal) => run(signal, () => requestTransferLogs(client, f)),
    blockTimestamp: (block, signal) => run(signal, () => readBlockTimestamp(client, times, label, block)),
    tokenInfo: (token, signal) => run(signal, () => readTokenInfo(client, tokens, token)),
  };
}

/** Readers shared across calls, one per RPC URL. */
export interface EvmRpcProvider {
  /** The reader of one RPC URL (created once); `label` is used in its error messages. */
  reader(url: string, label: string): EvmReader;
}

/** Creates the EVM JSON-RPC provider with the configured timeout and retries. */
export function createEvmRpcProvider(options: EvmRpcOptions): EvmRpcProvider {
  const readers = new Map<string, EvmReader>();
  return {
    reader(url, label) {
      const key = `${url} ${label}`;
      let reader = readers.get(key);
      if (!reader) {
        reader = createEvmReader(url, label, options);
        readers.set(key, reader);
      }
      return reader;
    },
  };
}
