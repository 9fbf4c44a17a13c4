import { custom, http, HttpRequestError, keccak256, type Chain, type Hex, type Transport } from 'viem';
import { causeChain, chainText, connectionRefused, noteSend } from '../rpc-trace.js';

const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

/**
 * True when the node surely did not take a raw transaction: it refused it with a JSON-RPC error (other than "already
 * known", which means it holds it), the request was rate-limited (HTTP 429, answered before any processing) or no
 * connection was made. Everything else (5xx, timeout, reset, unreadable answer) may have reached the node.
 */
export function surelyNotSent(err: unknown): boolean {
  const errors = causeChain(err);
  if (/already known|known transaction|already imported/i.test(chainText(err))) return false;
  const httpError = errors.find((e): e is HttpRequestError => e instanceof HttpRequestError);
  if (httpError) return httpError.status !== undefined ? httpError.status === 429 : connectionRefused(err);
  return errors.some((e) => typeof (e as { code?: unknown }).code === 'number');
}

/**
 * The transport the facilitator signer talks to its chain through: the RPC over HTTP with one retry, except that an
 * `eth_sendRawTransaction` whose answer was lost (it may have reached the node) reports the transaction's own hash
 * instead of failing. The library then waits for that receipt: it lands (settled), it reverted (failed), or the wait
 * ends in `settlement_pending` with the hash, which reconciliation settles or releases. Without this, a lost answer
 * was reported as a failed settlement while the transfer could still land: charged, nothing delivered, a failed receipt.
 * `onUnanswered` gets such a transaction (hash and signed bytes) so it can be sent again (see `UnansweredSends`).
 */
export function settlementTransport(
  chainDef: Chain,
  rpcUrl: string,
  onUnanswered: (hash: Hex, raw: Hex) => void = () => {},
): Transport {
  const { request } = http(rpcUrl, { retryCount: 0 })({ chain: chainDef });
  return custom(
    {
      async request(args: { method: string; params?: unknown }) {
        if (args.method !== 'eth_sendRawTransaction') return request(args as never);
        const raw = (args.params as readonly Hex[] | undefined)?.[0];
        if (!raw) return request(args as never);
        const hash = keccak256(raw);
        try {
          const answer = await request(args as never);
          noteSend();
          return typeof answer === 'string' && TX_HASH.test(answer) ? answer : hash;
        } catch (err) {
          if (surelyNotSent(err)) throw err;
          noteSend();
          onUnanswered(hash, raw);
          return hash;
        }
      },
    },
    { retryCount: 1, retryDelay: 100 },
  );
}

/**
 * Signed transactions whose send got no answer, kept (bounded) so that waiting for one first sends it again: the same
 * signed bytes are idempotent on the node ("already known", or "nonce too low" once mined or replaced), and a
 * transaction that never arrived gets its chance. Without this, the library's retry of a pending settlement (and our
 * reconciliation) would wait for a transaction that no node has ever seen until the authorization expired.
 */
export class UnansweredSends {
  private readonly raw = new Map<string, Hex>();

  constructor(private readonly limit = 256) {}

  /** Remembers a transaction whose send was not answered. */
  add(hash: Hex, raw: Hex): void {
    this.raw.set(hash.toLowerCase(), raw);
    while (this.raw.size > this.limit) this.raw.delete(this.raw.keys().next().value!);
  }

  /** The signed bytes of a remembered transaction, or undefined. */
  get(hash: string): Hex | undefined {
    return this.raw.get(hash.toLowerCase());
  }

  /** Forgets a transaction (its receipt was seen). */
  delete(hash: string): void {
    this.raw.delete(hash.toLowerCase());
  }
}
