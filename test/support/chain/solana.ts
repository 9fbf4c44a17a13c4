import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
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
import { memoOf, transactionJson } from './solana-history.js';
import type { SolanaLedger } from './solana-ledger.js';

/**
 * A look-alike Solana JSON-RPC server on 127.0.0.1 backed by an in-process litesvm ledger. It implements exactly
 * the methods the official `@x402/svm` client and facilitator call, plus the ones reconciliation and the agent's
 * chain check use: `getAccountInfo`, `getLatestBlockhash`, `simulateTransaction`, `sendTransaction`,
 * `getSignatureStatuses`, `isBlockhashValid`, `getSignaturesForAddress`, `getTransaction` (json or base64; the
 * history is the ledger's, so its set-up transactions are listed too). Any other method is answered with JSON-RPC error -32601 and recorded in `unknownMethods`.
 *
 * Deviation from a real cluster, on purpose: a transaction that can never land (bad or missing signature,
 * unknown/expired blockhash, fee payer without lamports) is refused by `sendTransaction` with a JSON-RPC error at
 * once, where a real RPC node with `skipPreflight` would return the signature and silently drop it (the caller
 * would then wait for a confirmation that never comes). A transaction that lands but fails in a program is
 * recorded with its error, as on a real cluster.
 */
export interface SolanaRpc {
  /** Base URL, e.g. `http://127.0.0.1:54321`. */
  url: string;
  /** Requests received per method. */
  calls: Map<string, number>;
  /** Methods asked for that the look-alike does not implement (a test asserts this stays empty). */
  unknownMethods: string[];
  /** Signatures of the transactions that landed successfully, in order. */
  landed: string[];
  /** Signatures of the transactions that landed and failed in a program. */
  failed: string[];
  close(): Promise<void>;
}

const TRANSACTION_ERRORS =
  'AccountInUse AccountLoadedTwice AccountNotFound ProgramAccountNotFound InsufficientFundsForFee InvalidAccountForFee AlreadyProcessed BlockhashNotFound CallChainTooDeep MissingSignatureForFee InvalidAccountIndex SignatureFailure InvalidProgramForExecution SanitizeFailure ClusterMaintenance AccountBorrowOutstanding WouldExceedMaxBlockCostLimit UnsupportedVersion InvalidWritableAccount WouldExceedMaxAccountCostLimit WouldExceedAccountDataBlockLimit TooManyAccountLocks AddressLookupTableNotFound InvalidAddressLookupTableOwner InvalidAddressLookupTableData InvalidAddressLookupTableIndex InvalidRentPayingAccount WouldExceedMaxVoteCostLimit WouldExceedAccountDataTotalLimit MaxLoadedAccountsDataSizeExceeded ResanitizationNeeded InvalidLoadedAccountsDataSizeLimit UnbalancedTransaction ProgramCacheHitMaxLimit CommitCancelled'.split(
    ' ',
  );
const INSTRUCTION_ERRORS =
  'GenericError InvalidArgument InvalidInstructionData InvalidAccountData AccountDataTooSmall InsufficientFunds IncorrectProgramId MissingRequiredSignature AccountAlreadyInitialized UninitializedAccount UnbalancedInstruction ModifiedProgramId ExternalAccountLamportSpend ExternalAccountDataModified ReadonlyLamportChange ReadonlyDataModified DuplicateAccountIndex ExecutableModified RentEpochModified NotEnoughAccountKeys AccountDataSizeChanged AccountNotExecutable AccountBorrowFailed AccountBorrowOutstanding DuplicateAccountOutOfSync InvalidError ExecutableDataModified ExecutableLamportChange ExecutableAccountNotRentExempt UnsupportedProgramId CallDepth MissingAccount ReentrancyNotAllowed MaxSeedLengthExceeded InvalidSeeds InvalidRealloc ComputationalBudgetExceeded PrivilegeEscalation ProgramEnvironmentSetupFailure ProgramFailedToComplete ProgramFailedToCompile Immutable IncorrectAuthority AccountNotRentExempt InvalidAccountOwner ArithmeticOverflow UnsupportedSysvar IllegalOwner MaxAccountsDataAllocationsExceeded MaxAccountsExceeded MaxInstructionTraceLengthExceeded BuiltinProgramsMustConsumeComputeUnits BorshIoError'.split(
    ' ',
  );

/** Transaction errors after which nothing lands on a real cluster (no fee is taken, no status is kept). */
const NEVER_LANDS = new Set([
  'AccountNotFound',
  'InsufficientFundsForFee',
  'InvalidAccountForFee',
  'AlreadyProcessed',
  'BlockhashNotFound',
  'MissingSignatureForFee',
  'SignatureFailure',
  'SanitizeFailure',
  'UnsupportedVersion',
]);

/** The JSON a real RPC node uses for a transaction error (`"BlockhashNotFound"`, `{"InstructionError":[2,{"Custom":1}]}`, …). */
function errorJson(failed: FailedTransactionMetadata): unknown {
  const err = failed.err() as unknown;
  if (typeof err === 'number') return TRANSACTION_ERRORS[err] ?? `TransactionError${err}`;
  const e = err as { index?: number; accountIndex?: number; err?: () => unknown; constructor: { name: string } };
  if (typeof e.err === 'function') {
    const inner = e.err() as unknown;
    const detail =
      typeof inner === 'number'
        ? (INSTRUCTION_ERRORS[inner] ?? `InstructionError${inner}`)
        : 'code' in (inner as object)
          ? { Custom: (inner as { code: number }).code }
          : { BorshIoError: (inner as { msg: string }).msg };
    return { InstructionError: [e.index, detail] };
  }
  if (e.constructor.name.includes('DuplicateInstruction')) return { DuplicateInstruction: e.index };
  if (e.constructor.name.includes('InsufficientFundsForRent'))
    return { InsufficientFundsForRent: { account_index: e.accountIndex } };
  return { ProgramExecutionTemporarilyRestricted: { account_index: e.accountIndex } };
}

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

interface Status {
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

/** Starts the look-alike JSON-RPC server for a ledger on a free port of 127.0.0.1. */
export async function startSolanaRpc(ledger: SolanaLedger): Promise<SolanaRpc> {
  const { svm } = ledger;
  const calls = new Map<string, number>();
  const unknownMethods: string[] = [];
  const landed: string[] = [];
  const failed: string[] = [];
  const statuses = new Map<string, Status>();
  const slot = () => Number(svm.getClock().slot);
  const context = () => ({ apiVersion: '2.2.0', slot: slot() });

  const methods: Record<string, (params: unknown[]) => unknown> = {
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

  function handle(request: unknown): unknown {
    const {
      id = null,
      method,
      params = [],
    } = (request ?? {}) as { id?: unknown; method?: unknown; params?: unknown[] };
    if (typeof method !== 'string') return { jsonrpc: '2.0', id, error: { code: -32600, message: 'Invalid request' } };
    calls.set(method, (calls.get(method) ?? 0) + 1);
    const impl = methods[method];
    if (!impl) {
      unknownMethods.push(method);
      return {
        jsonrpc: '2.0',
        id,
        error: { code: -32601, message: `Method not found: ${method} (not implemented by the look-alike)` },
      };
    }
    try {
      return { jsonrpc: '2.0', id, result: impl(Array.isArray(params) ? params : []) };
    } catch (err) {
      if (err instanceof RpcError)
        return {
          jsonrpc: '2.0',
          id,
          error: { code: err.code, message: err.message, ...(err.data ? { data: err.data } : {}) },
        };
      return { jsonrpc: '2.0', id, error: { code: -32603, message: `Internal error: ${(err as Error).message}` } };
    }
  }

  async function respond(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = undefined;
    }
    const answer =
      body === undefined
        ? { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }
        : Array.isArray(body)
          ? body.map(handle)
          : handle(body);
    const text = JSON.stringify(answer, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    respond(req, res).catch(() => res.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    unknownMethods,
    landed,
    failed,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        for (const socket of sockets) socket.destroy();
      }),
  };
}
