import { encodeAbiParameters } from 'viem';
import { startLookalikeServer, type Lookalike, type LookalikeOptions, type LookalikeRequest } from './server.js';

/** Options of the EVM JSON-RPC look-alike. */
export interface EvmRpcProxyOptions extends LookalikeOptions {
  /** Refuse `eth_getLogs` spanning more blocks than this, as public RPCs do (HTTP 200, code -32000). */
  maxLogBlocks?: number;
  /** The refusal text; default Base's "block range too large". */
  rangeMessage?: string;
}

/** A JSON-RPC look-alike in front of a real local node: counts calls, limits log ranges and fails on demand. */
export interface EvmRpcProxy extends Lookalike {
  /** Requests received per JSON-RPC method. */
  calls: Map<string, number>;
  /** Block ranges of the `eth_getLogs` calls the node answered. */
  logRanges: Array<[number, number]>;
  /** `eth_getLogs` calls refused as too large. */
  refusedRanges: number;
}

/** Matches requests for one JSON-RPC method (for `failNext`). */
export const rpcMethod =
  (...methods: string[]) =>
  (req: LookalikeRequest): boolean =>
    methods.includes(String((req.body as { method?: unknown } | undefined)?.method));

const blockOf = (tag: unknown, latest: number) =>
  typeof tag === 'string' && tag.startsWith('0x') ? Number(BigInt(tag)) : latest;

/**
 * Starts the look-alike: it forwards every request to `target` (a hardhat node) except the failures queued with
 * `failNext` — `error200` answers a JSON-RPC error (code -32000) with HTTP 200 — and log queries over `maxLogBlocks`.
 */
export async function startEvmRpcProxy(target: string, options: EvmRpcProxyOptions = {}): Promise<EvmRpcProxy> {
  const calls = new Map<string, number>();
  const logRanges: Array<[number, number]> = [];
  let refusedRanges = 0;
  const forward = async (body: unknown) => {
    const res = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as unknown };
  };
  const server = await startLookalikeServer(async (req, mode) => {
    const body = req.body as { id?: unknown; method?: string; params?: unknown[] };
    const method = String(body?.method);
    calls.set(method, (calls.get(method) ?? 0) + 1);
    if (mode === 'error200')
      return {
        json: {
          jsonrpc: '2.0',
          id: body.id ?? null,
          error: { code: -32000, message: `${method} failed in the look-alike` },
        },
      };
    if (method === 'eth_getLogs') {
      const filter = (body.params?.[0] ?? {}) as { fromBlock?: string; toBlock?: string };
      const latest = Number(
        BigInt(
          ((await forward({ jsonrpc: '2.0', id: 0, method: 'eth_blockNumber', params: [] })).json as { result: string })
            .result,
        ),
      );
      const from = blockOf(filter.fromBlock, latest);
      const to = blockOf(filter.toBlock, latest);
      if (options.maxLogBlocks !== undefined && to - from + 1 > options.maxLogBlocks) {
        refusedRanges += 1;
        return {
          json: {
            jsonrpc: '2.0',
            id: body.id ?? null,
            error: { code: -32000, message: options.rangeMessage ?? 'block range too large' },
          },
        };
      }
      logRanges.push([from, to]);
    }
    return forward(body);
  }, options);
  return Object.defineProperties(server, {
    calls: { value: calls },
    logRanges: { value: logRanges },
    refusedRanges: { get: () => refusedRanges },
  }) as EvmRpcProxy;
}

/** Fixed chain state a canned EVM RPC answers from. */
export interface CannedChain {
  chainId: number;
  /** Native balance (wei) of every address. */
  balance: bigint;
  /** Token balance (base units) of every address, symbol and decimals of every token. */
  tokenBalance: bigint;
  symbol: string;
  decimals: number;
  gasPrice: bigint;
}

/**
 * Starts an EVM JSON-RPC look-alike with canned state (no node behind it): `eth_chainId`, `eth_getBalance`,
 * `eth_call` for ERC-20 `balanceOf`/`symbol`/`decimals`, `eth_gasPrice`, `eth_blockNumber`. `error200` answers a
 * JSON-RPC error; unknown methods get -32601.
 */
export async function startCannedEvmRpc(state: CannedChain, options: LookalikeOptions = {}): Promise<EvmRpcProxy> {
  const calls = new Map<string, number>();
  const word = (n: bigint) => encodeAbiParameters([{ type: 'uint256' }], [n]);
  const text = (s: string) => encodeAbiParameters([{ type: 'string' }], [s]);
  const server = await startLookalikeServer((req, mode) => {
    const { id = null, method, params = [] } = req.body as { id?: unknown; method: string; params?: unknown[] };
    calls.set(method, (calls.get(method) ?? 0) + 1);
    const result = (value: unknown) => ({ json: { jsonrpc: '2.0', id, result: value } });
    if (mode === 'error200')
      return { json: { jsonrpc: '2.0', id, error: { code: -32000, message: `${method} failed in the look-alike` } } };
    switch (method) {
      case 'eth_chainId':
        return result(`0x${state.chainId.toString(16)}`);
      case 'eth_blockNumber':
        return result('0x10');
      case 'eth_getBalance':
        return result(`0x${state.balance.toString(16)}`);
      case 'eth_gasPrice':
        return result(`0x${state.gasPrice.toString(16)}`);
      case 'eth_call': {
        const data = String(
          (params[0] as { data?: string; input?: string }).data ?? (params[0] as { input?: string }).input,
        );
        if (data.startsWith('0x70a08231')) return result(word(state.tokenBalance));
        if (data.startsWith('0x95d89b41')) return result(text(state.symbol));
        if (data.startsWith('0x313ce567')) return result(word(BigInt(state.decimals)));
        return { json: { jsonrpc: '2.0', id, error: { code: 3, message: 'execution reverted' } } };
      }
      default:
        return {
          json: { jsonrpc: '2.0', id, error: { code: -32601, message: `the method ${method} does not exist` } },
        };
    }
  }, options);
  return Object.defineProperties(server, {
    calls: { value: calls },
    logRanges: { value: [] },
    refusedRanges: { get: () => 0 },
  }) as EvmRpcProxy;
}
