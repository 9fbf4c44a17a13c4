import {
  getBase58Decoder,
  getBase64Decoder,
  getCompiledTransactionMessageDecoder,
  getTransactionEncoder,
  type Address,
  type Transaction,
} from '@solana/kit';
import { getMintDecoder, getTokenDecoder, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { LiteSVM } from 'litesvm';

/**
 * What the local ledger keeps of the transactions that landed (succeeded, or failed in a program and paid their
 * fee), so the look-alike RPC can answer `getSignaturesForAddress` and `getTransaction` as a real node does.
 * Both the RPC's `sendTransaction` and the ledger's own set-up transactions record here.
 */

const base58 = getBase58Decoder();
const MEMO_PROGRAMS = new Set([
  'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr',
  'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo',
]);
const COMPUTE_BUDGET = 'ComputeBudget111111111111111111111111111111';
/** Lamports per signature on a default cluster (and in litesvm). */
const LAMPORTS_PER_SIGNATURE = 5000n;

type Decoded = ReturnType<ReturnType<typeof getCompiledTransactionMessageDecoder>['decode']>;
/** Legacy and v0 messages (the ones litesvm and the x402 clients use). */
type Compiled = Exclude<Decoded, { version: 1 }>;

/** A token balance as the RPC reports it in `preTokenBalances` / `postTokenBalances`. */
interface TokenBalanceJson {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  uiTokenAmount: { amount: string; decimals: number; uiAmount: number; uiAmountString: string };
}

/** One landed transaction. */
export interface LandedTransaction {
  signature: string;
  transaction: Transaction;
  message: Compiled;
  slot: number;
  blockTime: number;
  err: unknown;
  logs: string[];
  unitsConsumed: number;
  preBalances: number[];
  postBalances: number[];
  preTokenBalances: TokenBalanceJson[];
  postTokenBalances: TokenBalanceJson[];
}

function uiAmount(amount: bigint, decimals: number): string {
  const text = amount.toString().padStart(decimals + 1, '0');
  const whole = text.slice(0, text.length - decimals);
  const fraction = text.slice(text.length - decimals).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}

/** Lamports of every account key, in order (0 for an account that does not exist). */
function lamportsOf(svm: LiteSVM, keys: readonly Address[]): number[] {
  return keys.map((k) => Number(svm.getBalance(k) ?? 0n));
}

/** SPL Token balances of the account keys that are token accounts. */
function tokenBalancesOf(svm: LiteSVM, keys: readonly Address[]): TokenBalanceJson[] {
  const out: TokenBalanceJson[] = [];
  keys.forEach((key, accountIndex) => {
    const account = svm.getAccount(key);
    if (!account.exists || account.programAddress !== TOKEN_PROGRAM_ADDRESS || account.data.length !== 165) return;
    const token = getTokenDecoder().decode(account.data);
    const mint = svm.getAccount(token.mint);
    const decimals = mint.exists ? getMintDecoder().decode(mint.data).decimals : 0;
    const ui = uiAmount(token.amount, decimals);
    out.push({
      accountIndex,
      mint: token.mint,
      owner: token.owner,
      programId: TOKEN_PROGRAM_ADDRESS,
      uiTokenAmount: { amount: token.amount.toString(), decimals, uiAmount: Number(ui), uiAmountString: ui },
    });
  });
  return out;
}

/** The fee a default cluster charges: 5000 lamports a signature plus the priority fee (unit price × unit limit). */
function feeOf(entry: LandedTransaction): number {
  const { staticAccounts, instructions } = entry.message;
  let price = 0n;
  let limit: bigint | undefined;
  let others = 0n;
  for (const ix of instructions) {
    const data = ix.data ?? new Uint8Array();
    if (staticAccounts[ix.programAddressIndex] !== COMPUTE_BUDGET) others++;
    else if (data[0] === 3 && data.length >= 9)
      price = new DataView(data.buffer, data.byteOffset).getBigUint64(1, true);
    else if (data[0] === 2 && data.length >= 5)
      limit = BigInt(new DataView(data.buffer, data.byteOffset).getUint32(1, true));
  }
  const units = limit ?? (others * 200_000n < 1_400_000n ? others * 200_000n : 1_400_000n);
  const priority = (price * units + 999_999n) / 1_000_000n;
  return Number(BigInt(entry.message.header.numSignerAccounts) * LAMPORTS_PER_SIGNATURE + priority);
}

/** The `memo` field of `getSignaturesForAddress`: each memo instruction as `[length] text`, joined by `; `. */
export function memoOf(entry: LandedTransaction): string | null {
  const { staticAccounts, instructions } = entry.message;
  const memos = instructions
    .filter((ix) => MEMO_PROGRAMS.has(staticAccounts[ix.programAddressIndex] ?? ''))
    .map((ix) => {
      const text = new TextDecoder().decode(Uint8Array.from(ix.data ?? []));
      return `[${Buffer.byteLength(text)}] ${text}`;
    });
  return memos.length ? memos.join('; ') : null;
}

/** The landed transactions of a ledger, oldest first. */
export class SolanaHistory {
  readonly landed: LandedTransaction[] = [];
  private readonly bySignature = new Map<string, LandedTransaction>();

  constructor(private readonly svm: LiteSVM) {}

  /**
   * Captures the balances a transaction touches, runs `send` (the ledger executing it), and returns the result
   * with `land(err)` to call when the transaction landed (`err` null on success, the RPC error JSON on a program
   * failure); a transaction that never lands is simply not recorded.
   */
  around<T>(
    tx: Transaction,
    send: () => T,
  ): { result: T; land(err: unknown, meta: { logs: string[]; unitsConsumed: number }): void } {
    const decoded = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
    if (decoded.version === 1) throw new Error('the look-alike ledger keeps legacy and v0 transactions only');
    const message: Compiled = decoded;
    const keys = message.staticAccounts;
    const preBalances = lamportsOf(this.svm, keys);
    const preTokenBalances = tokenBalancesOf(this.svm, keys);
    const result = send();
    return {
      result,
      land: (err, meta) => {
        const first = Object.values(tx.signatures)[0];
        if (!first) return;
        const entry: LandedTransaction = {
          signature: base58.decode(first),
          transaction: tx,
          message,
          slot: Number(this.svm.getClock().slot),
          blockTime: Number(this.svm.getClock().unixTimestamp),
          err,
          ...meta,
          preBalances,
          postBalances: lamportsOf(this.svm, keys),
          preTokenBalances,
          postTokenBalances: tokenBalancesOf(this.svm, keys),
        };
        this.landed.push(entry);
        this.bySignature.set(entry.signature, entry);
      },
    };
  }

  /** A landed transaction by its id (first signature). */
  get(signature: string): LandedTransaction | undefined {
    return this.bySignature.get(signature);
  }

  /** Landed transactions naming `address` among their account keys, newest first, between `before` and `until` (both excluded). */
  forAddress(address: string, options: { limit: number; before?: string; until?: string }): LandedTransaction[] {
    const out: LandedTransaction[] = [];
    let started = options.before === undefined;
    for (let i = this.landed.length - 1; i >= 0 && out.length < options.limit; i--) {
      const entry = this.landed[i]!;
      if (!started) {
        started = entry.signature === options.before;
        continue;
      }
      if (entry.signature === options.until) break;
      if (entry.message.staticAccounts.includes(address as Address)) out.push(entry);
    }
    return out;
  }
}

/** A transaction in `getTransaction`'s `json` encoding: its signatures and its message with indexes and keys. */
function jsonTransaction(entry: LandedTransaction): Record<string, unknown> {
  const { message } = entry;
  const versioned = message.version !== 'legacy';
  const signatures = Object.values(entry.transaction.signatures).map((s) =>
    s ? base58.decode(s) : base58.decode(new Uint8Array(64)),
  );
  return {
    signatures,
    message: {
      accountKeys: message.staticAccounts,
      header: {
        numRequiredSignatures: message.header.numSignerAccounts,
        numReadonlySignedAccounts: message.header.numReadonlySignerAccounts,
        numReadonlyUnsignedAccounts: message.header.numReadonlyNonSignerAccounts,
      },
      recentBlockhash: message.lifetimeToken,
      instructions: message.instructions.map((ix) => ({
        programIdIndex: ix.programAddressIndex,
        accounts: [...(ix.accountIndices ?? [])],
        data: base58.decode(ix.data ?? new Uint8Array()),
        stackHeight: null,
      })),
      ...(versioned
        ? {
            addressTableLookups: (message.addressTableLookups ?? []).map((l) => ({
              accountKey: l.lookupTableAddress,
              writableIndexes: [...l.writableIndexes],
              readonlyIndexes: [...l.readonlyIndexes],
            })),
          }
        : {}),
    },
  };
}

/** `getTransaction`'s answer for a landed transaction, in `json` or `base64` encoding, with `version` when asked for. */
export function transactionJson(
  entry: LandedTransaction,
  encoding: 'json' | 'base64',
  withVersion: boolean,
): Record<string, unknown> {
  const { message } = entry;
  const versioned = message.version !== 'legacy';
  const transaction =
    encoding === 'base64'
      ? [getBase64Decoder().decode(getTransactionEncoder().encode(entry.transaction)), 'base64']
      : jsonTransaction(entry);
  return {
    slot: entry.slot,
    blockTime: entry.blockTime,
    ...(withVersion ? { version: versioned ? message.version : 'legacy' } : {}),
    transaction,
    meta: {
      err: entry.err,
      status: entry.err ? { Err: entry.err } : { Ok: null },
      fee: feeOf(entry),
      preBalances: entry.preBalances,
      postBalances: entry.postBalances,
      innerInstructions: [],
      logMessages: entry.logs,
      preTokenBalances: entry.preTokenBalances,
      postTokenBalances: entry.postTokenBalances,
      rewards: [],
      ...(withVersion ? { loadedAddresses: { writable: [], readonly: [] } } : {}),
      computeUnitsConsumed: entry.unitsConsumed,
    },
  };
}
