/**
 * Read-only Solana JSON-RPC on `@solana/kit` (docs/spec-notes.md#wallet-reads): lamports (`getBalance`) and an owner's
 * balance of one SPL mint (`getTokenAccountsByOwner`, jsonParsed, summed over the owner's accounts for the mint).
 * Each request is bounded by the configured timeout; failures become ToolErrors.
 */
import {
  address as toAddress,
  createSolanaRpc,
  isSolanaError,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
  type Rpc,
  type SolanaRpcApi,
} from '@solana/kit';
import { ToolError } from '../../shared/errors.js';

/** An owner's balance of one mint in base units, with the mint's decimals (null when the owner has no account for it). */
export interface SplBalance {
  raw: bigint;
  decimals: number | null;
}

/** Read-only access to one Solana cluster. */
export interface SolanaReader {
  readonly label: string;
  lamports(owner: string, signal?: AbortSignal): Promise<bigint>;
  tokenBalance(owner: string, mint: string, signal?: AbortSignal): Promise<SplBalance>;
}

/** Maps a kit failure (HTTP status, JSON-RPC error, timeout) to a ToolError. */
export function solanaRpcError(err: unknown, label: string, timeoutMs: number, timedOut: boolean): ToolError {
  if (err instanceof ToolError) return err;
  if (timedOut)
    return new ToolError(
      'upstream_timeout',
      `The ${label} did not answer within ${timeoutMs} ms. Try again in a minute.`,
    );
  if (isSolanaError(err, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR)) {
    const status = err.context.statusCode;
    if (status === 429)
      return new ToolError(
        'upstream_rate_limited',
        `The ${label} is rate-limiting requests right now. Try again in a minute.`,
      );
    return new ToolError(
      'upstream_unavailable',
      `The ${label} is unavailable (HTTP ${status}). Try again in a minute.`,
    );
  }
  if (isSolanaError(err)) {
    return new ToolError(
      'upstream_unavailable',
      `The ${label} refused the request (${err.message.slice(0, 200)}). Try again later.`,
      { cause: err },
    );
  }
  return new ToolError('upstream_unavailable', `The ${label} could not be reached. Try again in a minute.`, {
    cause: err,
  });
}

/** Runs one kit request under a timeout joined with the caller's signal, mapping failures to ToolErrors. */
export async function solanaCall<T>(
  label: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  send: (abortSignal: AbortSignal) => Promise<T>,
): Promise<T> {
  if (signal?.aborted) throw new ToolError('cancelled', 'The call was cancelled.');
  const timeout = AbortSignal.timeout(timeoutMs);
  const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
  try {
    return await send(both);
  } catch (err) {
    if (signal?.aborted) throw new ToolError('cancelled', 'The call was cancelled.');
    throw solanaRpcError(err, label, timeoutMs, timeout.aborted);
  }
}

/** The kit RPC client of one cluster URL. */
export function solanaRpc(url: string): Rpc<SolanaRpcApi> {
  return createSolanaRpc(url);
}

/** Creates a reader for one Solana RPC URL; `label` names it in error messages. */
export function createSolanaReader(url: string, label: string, timeoutMs: number): SolanaReader {
  const rpc = solanaRpc(url);
  return {
    label,
    lamports: (owner, signal) =>
      solanaCall(
        label,
        timeoutMs,
        signal,
        async (abortSignal) => (await rpc.getBalance(toAddress(owner)).send({ abortSignal })).value,
      ),
    tokenBalance: (owner, mint, signal) =>
      solanaCall(label, timeoutMs, signal, async (abortSignal) => {
        const { value } = await rpc
          .getTokenAccountsByOwner(toAddress(owner), { mint: toAddress(mint) }, { encoding: 'jsonParsed' })
          .send({ abortSignal });
        let raw = 0n;
        let decimals: number | null = null;
        for (const account of value) {
          const amount = account.account.data.parsed.info.tokenAmount;
          raw += BigInt(amount.amount);
          decimals = amount.decimals;
        }
        return { raw, decimals };
      }),
  };
}
