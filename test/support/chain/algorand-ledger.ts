import algosdk from 'algosdk';
import {
  ASSET_MIN_BALANCE,
  BASE_MIN_BALANCE,
  MAX_GROUP_SIZE,
  MAX_TXN_LIFE,
  b64,
  cloneAccounts,
  ed25519Valid,
  expectedGroupId,
  type LedgerAccount,
} from './algorand-rules.js';

export { expectedGroupId, type LedgerAccount } from './algorand-rules.js';

/** A transaction the ledger committed, with the round it landed in. */
export interface ConfirmedTxn {
  round: bigint;
  stxn: algosdk.SignedTransaction;
}

/** Why the ledger refused a group: algod's message and the index of the offending transaction. */
export class LedgerRejection extends Error {
  constructor(
    message: string,
    readonly failedAt?: number,
  ) {
    super(message);
  }
}

/**
 * An in-memory Algorand ledger with algod's validation rules for `pay` and `axfer` groups: genesis, validity
 * rounds, duplicate txids, group id, ed25519 signatures by each sender (or its auth address), pooled fees,
 * balances, opt-ins and minimum balances. Groups apply atomically; each accepted group makes a new round.
 */
export class AlgorandLedger {
  readonly minFee = 1000n;
  round: bigint;
  readonly accounts = new Map<string, LedgerAccount>();
  readonly assets = new Map<bigint, { creator: string; decimals: number }>();
  readonly confirmed = new Map<string, ConfirmedTxn>();
  readonly blocks = new Map<bigint, string[]>();
  /** Every group the ledger accepted, in order (tests read what was really submitted). */
  readonly accepted: algosdk.SignedTransaction[][] = [];
  /** While true, accepted groups wait in the pool (pending, unconfirmed) instead of being committed. */
  holding = false;
  private readonly pool = new Map<string, algosdk.SignedTransaction>();
  private readonly held: algosdk.SignedTransaction[][] = [];
  /** How many rounds algod's pending endpoint remembers a confirmed txid (undefined: always, as a fresh node). */
  pendingMemoryRounds: bigint | undefined;
  private nextAssetId = 1_000_001n;

  constructor(
    readonly genesisHash: Uint8Array,
    readonly genesisId: string,
    startRound = 1000n,
  ) {
    this.round = startRound;
  }

  /** Credits µAlgo to an account (creating it). */
  fund(address: string, microAlgo: bigint): void {
    const acct = this.accounts.get(address) ?? { algo: 0n, assets: new Map() };
    acct.algo += microAlgo;
    this.accounts.set(address, acct);
  }

  /** Creates an ASA held entirely by its creator and returns its id. */
  createAsset(creator: string, total: bigint, decimals: number): bigint {
    const id = this.nextAssetId++;
    this.assets.set(id, { creator, decimals });
    this.optIn(creator, id);
    this.accounts.get(creator)!.assets.set(id, total);
    return id;
  }

  /** Opts an existing account in to an ASA. */
  optIn(address: string, assetId: bigint): void {
    const acct = this.accounts.get(address);
    if (!acct) throw new Error(`account ${address} does not exist`);
    if (!acct.assets.has(assetId)) acct.assets.set(assetId, 0n);
  }

  /** Moves ASA units from the creator to a holder (test setup, not a transaction). */
  grant(address: string, assetId: bigint, amount: bigint): void {
    const asset = this.assets.get(assetId);
    if (!asset) throw new Error(`asset ${assetId} does not exist`);
    this.optIn(address, assetId);
    const creator = this.accounts.get(asset.creator)!;
    creator.assets.set(assetId, creator.assets.get(assetId)! - amount);
    const holder = this.accounts.get(address)!;
    holder.assets.set(assetId, holder.assets.get(assetId)! + amount);
  }

  /** µAlgo of an account (0 when it does not exist). */
  algoOf(address: string): bigint {
    return this.accounts.get(address)?.algo ?? 0n;
  }

  /** ASA units an account holds (0 when not opted in). */
  assetOf(address: string, assetId: bigint): bigint {
    return this.accounts.get(address)?.assets.get(assetId) ?? 0n;
  }

  /** What the pending endpoint knows of a txid: confirmed (round > 0, remembered for recent rounds only) or in the pool (round 0). */
  pendingInfo(txid: string): ConfirmedTxn | undefined {
    const pooled = this.pool.get(txid);
    if (pooled) return { round: 0n, stxn: pooled };
    const found = this.confirmed.get(txid);
    if (!found || (this.pendingMemoryRounds !== undefined && found.round + this.pendingMemoryRounds < this.round))
      return undefined;
    return found;
  }

  /** Stops holding and commits every group waiting in the pool. */
  releaseHeld(): void {
    this.holding = false;
    for (const group of this.held.splice(0)) {
      for (const stxn of group) this.pool.delete(stxn.txn.txID());
      this.submit(group);
    }
  }

  /** Lets rounds pass without transactions (to expire validity windows). */
  advance(rounds: number): void {
    this.round += BigInt(rounds);
  }

  /** Minimum balance of an account: 0.1 ALGO plus 0.1 ALGO per ASA opted in. */
  minBalance(acct: LedgerAccount): bigint {
    return BASE_MIN_BALANCE + ASSET_MIN_BALANCE * BigInt(acct.assets.size);
  }

  /** Checks a group as algod would and returns the state it would leave; throws LedgerRejection. */
  evaluate(
    group: algosdk.SignedTransaction[],
    opts: { allowEmptySignatures?: boolean } = {},
  ): Map<string, LedgerAccount> {
    if (group.length === 0 || group.length > MAX_GROUP_SIZE)
      throw new LedgerRejection(`group size ${group.length} is not within 1..${MAX_GROUP_SIZE}`);
    const next = this.round + 1n;
    const txns = group.map((s) => s.txn);
    const expectedGroup = group.length > 1 || txns[0]!.group ? expectedGroupId(txns) : undefined;
    let fees = 0n;
    group.forEach((stxn, i) => {
      const txn = stxn.txn;
      const id = txn.txID();
      if (b64(txn.genesisHash) !== b64(this.genesisHash))
        throw new LedgerRejection(
          `txn ${id} has genesis hash ${b64(txn.genesisHash)}, this network is ${b64(this.genesisHash)}`,
          i,
        );
      if (next < txn.firstValid || next > txn.lastValid)
        throw new LedgerRejection(`txn dead: round ${next} outside of ${txn.firstValid}--${txn.lastValid}`, i);
      if (txn.lastValid - txn.firstValid > MAX_TXN_LIFE)
        throw new LedgerRejection(`txn ${id} validity period exceeds ${MAX_TXN_LIFE} rounds`, i);
      if (this.confirmed.has(id)) throw new LedgerRejection(`transaction already in ledger: ${id}`, i);
      if (expectedGroup && b64(txn.group) !== b64(expectedGroup)) {
        throw new LedgerRejection(`transactionGroup: incomplete group: ${b64(txn.group)} != ${b64(expectedGroup)}`, i);
      }
      this.checkSignature(stxn, i, opts.allowEmptySignatures === true);
      fees += txn.fee;
    });
    const minimum = this.minFee * BigInt(group.length);
    if (fees < minimum)
      throw new LedgerRejection(
        `txgroup had ${fees} in fees, which is less than the minimum ${group.length} * ${this.minFee}`,
      );
    const state = cloneAccounts(this.accounts);
    group.forEach((stxn, i) => this.apply(state, stxn.txn, i));
    return state;
  }

  /** Evaluates a group and commits it in a new round; returns the txid of its first transaction. */
  submit(group: algosdk.SignedTransaction[]): string {
    const state = this.evaluate(group);
    const pooled = group.find((s) => this.pool.has(s.txn.txID()));
    if (pooled) throw new LedgerRejection(`transaction already in pool: ${pooled.txn.txID()}`);
    if (this.holding) {
      for (const stxn of group) this.pool.set(stxn.txn.txID(), stxn);
      this.held.push(group);
      return group[0]!.txn.txID();
    }
    this.accounts.clear();
    for (const [k, v] of state) this.accounts.set(k, v);
    this.round += 1n;
    const ids = group.map((s) => s.txn.txID());
    group.forEach((stxn, i) => this.confirmed.set(ids[i]!, { round: this.round, stxn }));
    this.blocks.set(this.round, ids);
    this.accepted.push(group);
    return ids[0]!;
  }

  private checkSignature(stxn: algosdk.SignedTransaction, i: number, allowEmpty: boolean): void {
    if (stxn.msig || stxn.lsig || stxn.pqsig)
      throw new LedgerRejection('this look-alike algod accepts only single ed25519 signatures', i);
    const sender = stxn.txn.sender.toString();
    const authorizer = stxn.sgnr?.toString() ?? this.accounts.get(sender)?.authAddr ?? sender;
    if (!stxn.sig) {
      if (allowEmpty) return;
      throw new LedgerRejection(`txn ${stxn.txn.txID()} is not signed (signedtxn has no sig)`, i);
    }
    if (!ed25519Valid(algosdk.decodeAddress(authorizer).publicKey, stxn.txn.bytesToSign(), stxn.sig)) {
      throw new LedgerRejection(
        `At least one signature didn't pass verification (txn ${stxn.txn.txID()} is not signed by ${authorizer})`,
        i,
      );
    }
  }

  private apply(state: Map<string, LedgerAccount>, txn: algosdk.Transaction, i: number): void {
    const sender = txn.sender.toString();
    const from = state.get(sender);
    if (!from) throw new LedgerRejection(`account ${sender} does not exist`, i);
    from.algo -= txn.fee;
    if (txn.type === 'pay' && txn.payment) {
      const p = txn.payment;
      this.credit(state, p.receiver.toString(), p.amount, sender, from, i);
      if (p.closeRemainderTo) {
        if (from.assets.size > 0)
          throw new LedgerRejection(`cannot close account ${sender} with active asset holdings`, i);
        this.credit(state, p.closeRemainderTo.toString(), from.algo, sender, from, i);
        state.delete(sender);
      }
    } else if (txn.type === 'axfer' && txn.assetTransfer) {
      this.transferAsset(state, txn.assetTransfer, sender, from, i);
    } else {
      throw new LedgerRejection(`this look-alike algod handles only pay and axfer transactions, not ${txn.type}`, i);
    }
    if (txn.rekeyTo) from.authAddr = txn.rekeyTo.toString() === sender ? undefined : txn.rekeyTo.toString();
    for (const [addr, acct] of state) {
      if (acct.algo < 0n)
        throw new LedgerRejection(`overspend (account ${addr}, tried to spend beyond its balance)`, i);
      if (acct.algo < this.minBalance(acct))
        throw new LedgerRejection(`account ${addr} balance ${acct.algo} below min ${this.minBalance(acct)}`, i);
    }
  }

  private credit(
    state: Map<string, LedgerAccount>,
    to: string,
    amount: bigint,
    sender: string,
    from: LedgerAccount,
    i: number,
  ): void {
    if (amount > from.algo) throw new LedgerRejection(`overspend (account ${sender}, tried to spend ${amount})`, i);
    from.algo -= amount;
    const target = state.get(to) ?? { algo: 0n, assets: new Map<bigint, bigint>() };
    target.algo += amount;
    state.set(to, target);
  }

  private transferAsset(
    state: Map<string, LedgerAccount>,
    a: algosdk.AssetTransferTransactionFields,
    sender: string,
    from: LedgerAccount,
    i: number,
  ): void {
    const id = a.assetIndex;
    if (!this.assets.has(id)) throw new LedgerRejection(`asset ${id} does not exist or has been deleted`, i);
    if (a.assetSender) throw new LedgerRejection('this look-alike algod does not support clawback transfers', i);
    const receiver = a.receiver.toString();
    if (a.amount === 0n && receiver === sender && !from.assets.has(id)) {
      from.assets.set(id, 0n);
      return;
    }
    const have = from.assets.get(id);
    if (have === undefined) throw new LedgerRejection(`asset ${id} missing from ${sender}`, i);
    if (have < a.amount)
      throw new LedgerRejection(`underflow on subtracting ${a.amount} from sender amount ${have}`, i);
    const to = state.get(receiver);
    if (!to?.assets.has(id))
      throw new LedgerRejection(`receiver error: must optin, asset ${id} missing from ${receiver}`, i);
    from.assets.set(id, have - a.amount);
    to.assets.set(id, to.assets.get(id)! + a.amount);
    if (a.closeRemainderTo) {
      const closeTo = state.get(a.closeRemainderTo.toString());
      if (!closeTo?.assets.has(id))
        throw new LedgerRejection(`asset ${id} missing from close-to ${a.closeRemainderTo.toString()}`, i);
      closeTo.assets.set(id, closeTo.assets.get(id)! + from.assets.get(id)!);
      from.assets.delete(id);
    }
  }
}
