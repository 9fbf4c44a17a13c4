/** The look-alike Solana RPC's methods (solana.ts): each answered from the litesvm ledger as a real node answers it. */
import {
  getBase58Decoder,
  getBase58Encoder,
  getBase64Encoder,
  getTransactionDecoder,
  isAddress,
  type Address,
  type Transaction,
} from '@solana/kit';
import { FailedTransactionMetadata, type TransactionMetadata } from 'litesvm';
import { errorJson, NEVER_LANDS } from './solana-errors.js';
import { memoOf, transactionJson } from './solana-history.js';
import type { SolanaLedger } from './solana-ledger.js';

/** A JSON-RPC error answer (code, message, optional data). */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** What the cluster keeps of a landed transaction for `getSignatureStatuses`. */
export interface SolanaStatus {
  slot: number;
  err: unknown;
}

function decodeWireTransaction(base64: unknown, encoding: unknown): Transaction {
  if (encoding !== undefined && encoding !== 'base64')
    throw new RpcError(-32602, 'the look-alike accepts base64-encoded transactions only');
  if (typeof base64 !== 'string') throw new RpcError(-32602, 'invalid transaction: expected a base64 string');
  try {
    return getTransactionDecoder().decode(getBase64Encoder().encode(base64));
  } catch (err) {
    throw new RpcError(-32602, `failed to deserialize transaction: ${(err as Error).message}`);
  }
}

const base58 = getBase58Decoder();

/** The bytes of a base58 string, or undefined when it is not base58. */
function base58Bytes(text: string): Uint8Array | undefined {
  try {
    return Uint8Array.from(getBase58Encoder().encode(text));
  } catch {
    return undefined;
  }
}

/** The transaction id: the first (fee payer's) signature in base58, or undefined when that slot is unsigned. */
function firstSignature(tx: Transaction): string | undefined {
  const first = Object.values(tx.signatures)[0];
  return first ? base58.decode(first) : undefined;
}

function metaJson(meta: TransactionMetadata) {
  return { logs: meta.logs(), unitsConsumed: Number(meta.computeUnitsConsumed()) };
}

/** What `sendTransaction` records: each signature's status, and which landed and which failed in a program. */
export interface SentBook {
  statuses: Map<string, SolanaStatus>;
  landed: string[];
  failed: string[];
}

type Methods = Record<string, (params: unknown[]) => unknown>;

/** The slot and the `context` of an answer. */
function clock(ledger: SolanaLedger): { slot: () => number; context: () => { apiVersion: string; slot: number } } {
  const slot = () => Number(ledger.svm.getClock().slot);
  return { slot, context: () => ({ apiVersion: '2.2.0', slot: slot() }) };
}

/** The methods that read the ledger's state: blockhash, accounts and signature statuses. */
function stateMethods(ledger: SolanaLedger, book: SentBook): Methods {
  const { svm } = ledger;
  const { slot, context } = clock(ledger);
  const statuses = book.statuses;
  return {
    getLatestBlockhash: () => ({
      context: context(),
      value: { blockhash: svm.latestBlockhash(), lastValidBlockHeight: slot() + 150 },
    }),
    isBlockhashValid: ([blockhash]) => ({ context: context(), value: blockhash === svm.latestBlockhash() }),
    getAccountInfo: ([address, config]) => {
      const encoding = (config as { encoding?: string } | undefined)?.encoding ?? 'base64';
      if (encoding !== 'base64')
        throw new RpcError(-32602, `the look-alike serves account data as base64 only (asked for ${encoding})`);
      const account = svm.getAccount(address as Address);
      if (!account.exists) return { context: context(), value: null };
      return {
        context: context(),
        value: {
          data: [Buffer.from(account.data).toString('base64'), 'base64'],
          executable: account.executable,
          lamports: Number(account.lamports),
          owner: account.programAddress,
          rentEpoch: 0,
          space: account.data.length,
        },
      };
    },
    getSignatureStatuses: ([signatures]) => ({
      context: context(),
      value: (signatures as string[]).map((s) => {
        const status = statuses.get(s);
        if (!status) return null;
        return {
          slot: status.slot,
          confirmations: null,
          err: status.err,
          status: status.err ? { Err: status.err } : { Ok: null },
          confirmationStatus: 'finalized',
        };
      }),
    }),
  };
}

/** `simulateTransaction`: the transaction run on the ledger without landing (signatures checked when asked). */
function simulateMethod(ledger: SolanaLedger): Methods {
  const { svm } = ledger;
  const { context } = clock(ledger);
  return {
    simulateTransaction: ([wire, config]) => {
      const opts = (config ?? {}) as {
        sigVerify?: boolean;
        replaceRecentBlockhash?: boolean;
        encoding?: string;
        innerInstructions?: boolean;
      };
      if (opts.replaceRecentBlockhash)
        throw new RpcError(-32602, 'the look-alike does not implement replaceRecentBlockhash');
      const tx = decodeWireTransaction(wire, opts.encoding);
      const sigVerify = opts.sigVerify === true;
      svm.withSigverify(sigVerify);
      let result;
      try {
        result = svm.simulateTransaction(tx);
      } catch (err) {
        if (sigVerify)
          return {
            context: context(),
            value: { err: 'SignatureFailure', logs: [], accounts: null, unitsConsumed: 0, returnData: null },
          };
        throw err;
      } finally {
        svm.withSigverify(true);
      }
      const err = result instanceof FailedTransactionMetadata ? errorJson(result) : null;
      return {
        context: context(),
        value: {
          err,
          accounts: null,
          returnData: null,
          ...metaJson(result.meta()),
          ...(opts.innerInstructions ? { innerInstructions: [] } : {}),
        },
      };
    },
  };
}

/** `sendTransaction`: the transaction landed on the ledger (or refused when it can never land), recorded in `book`. */
function sendMethod(ledger: SolanaLedger, book: SentBook): Methods {
  const { svm } = ledger;
  const { slot } = clock(ledger);
  const { statuses, landed, failed } = book;
  return {
    sendTransaction: ([wire, config]) => {
      const tx = decodeWireTransaction(wire, (config as { encoding?: string } | undefined)?.encoding);
      const signature = firstSignature(tx);
      if (!signature) throw new RpcError(-32003, 'Transaction signature verification failure');
      if (statuses.has(signature)) return signature; // a resent transaction is deduplicated by the cluster
      let sent;
      try {
        sent = ledger.history.around(tx, () => svm.sendTransaction(tx));
      } catch {
        throw new RpcError(-32003, 'Transaction signature verification failure');
      }
      const { result, land } = sent;
      if (result instanceof FailedTransactionMetadata) {
        const err = errorJson(result);
        if (typeof err === 'string' && NEVER_LANDS.has(err)) {
          throw new RpcError(-32002, `Transaction would never land: ${err}`, { err, logs: result.meta().logs() });
        }
        land(err, metaJson(result.meta()));
        statuses.set(signature, { slot: slot(), err });
        failed.push(signature);
        return signature;
      }
      land(null, metaJson(result));
      statuses.set(signature, { slot: slot(), err: null });
      landed.push(signature);
      return signature;
    },
  };
}

/** The history methods: `getSignaturesForAddress` and `getTransaction`, from the ledger's history. */
function historyMethods(ledger: SolanaLedger): Methods {
  return {
    getSignaturesForAddress: ([address, config]) => {
      const opts = (config ?? {}) as { limit?: number; before?: string; until?: string; commitment?: string };
      if (typeof address !== 'string' || !isAddress(address)) throw new RpcError(-32602, 'Invalid param: Invalid');
      if (opts.commitment === 'processed')
        throw new RpcError(-32602, 'Method does not support commitment below `confirmed`');
      const limit = opts.limit ?? 1000;
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new RpcError(-32602, 'Invalid limit; max 1000');
      return ledger.history.forAddress(address, { limit, before: opts.before, until: opts.until }).map((entry) => ({
        signature: entry.signature,
        slot: entry.slot,
        err: entry.err,
        memo: memoOf(entry),
        blockTime: entry.blockTime,
        confirmationStatus: 'finalized',
      }));
    },
    getTransaction: ([signature, config]) => {
      const opts = (typeof config === 'string' ? { encoding: config } : (config ?? {})) as {
        encoding?: string;
        maxSupportedTransactionVersion?: number;
        commitment?: string;
      };
      const encoding = opts.encoding ?? 'json';
      if (encoding !== 'json' && encoding !== 'base64')
        throw new RpcError(-32602, `the look-alike serves transactions as json or base64 only (asked for ${encoding})`);
      if (opts.commitment === 'processed')
        throw new RpcError(-32602, 'Method does not support commitment below `confirmed`');
      if (typeof signature !== 'string' || base58Bytes(signature)?.length !== 64)
        throw new RpcError(-32602, 'Invalid param: Invalid');
      const entry = ledger.history.get(signature);
      if (!entry) return null;
      const version = entry.message.version;
      if (
        version !== 'legacy' &&
        (opts.maxSupportedTransactionVersion === undefined || opts.maxSupportedTransactionVersion < version)
      ) {
        throw new RpcError(
          -32015,
          `Transaction version (${version}) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": ${version}`,
        );
      }
      return transactionJson(entry, encoding, opts.maxSupportedTransactionVersion !== undefined);
    },
  };
}

/** Every method the look-alike implements, by name. */
export function solanaMethods(ledger: SolanaLedger, book: SentBook): Methods {
  return {
    ...stateMethods(ledger, book),
    ...simulateMethod(ledger),
    ...sendMethod(ledger, book),
    ...historyMethods(ledger),
  };
}
