import { randomBytes } from 'node:crypto';
import {
  Address,
  FeeBumpTransaction,
  hash,
  Keypair,
  scValToNative,
  StrKey,
  TransactionBuilder,
  xdr,
  type Operation,
  type Transaction,
} from '@stellar/stellar-sdk';
import { balanceKey, instanceKey, nonceKey, transferEvent } from './stellar-xdr.js';

/** A SAC-like token: SEP-41 `transfer` with balances kept by address. */
export interface LookAlikeToken {
  contract: string;
  /** SEP-11 name as the SAC puts it in events, e.g. `USDC:G…`. */
  name: string;
  balances: Map<string, bigint>;
}

/** What executing (or simulating) the single invocation of a transaction produced. */
export type Execution =
  | {
      ok: true;
      auth: xdr.SorobanAuthorizationEntry[];
      events: xdr.ContractEvent[];
      readOnly: xdr.LedgerKey[];
      readWrite: xdr.LedgerKey[];
    }
  | { ok: false; error: string };

/** The resource fee the look-alike charges for a SEP-41 transfer (stroops). */
export const TRANSFER_RESOURCE_FEE = 31_000n;

const hostError = (kind: string, detail: string) =>
  `HostError: Error(${kind})\n\nEvent log (newest first):\n   0: [Diagnostic Event] topics:[error, Error(${kind})], data:"${detail}"`;

/** The `from`, `to` and `amount` of a `transfer(from: Address, to: Address, amount: i128)` call; undefined for other arguments. */
function transferArgs(invoke: xdr.InvokeContractArgs): { from: string; to: string; amount: bigint } | undefined {
  const args = invoke.args();
  if (
    args.length !== 3 ||
    args[0]?.switch().name !== 'scvAddress' ||
    args[1]?.switch().name !== 'scvAddress' ||
    args[2]?.switch().name !== 'scvI128'
  )
    return undefined;
  return {
    from: Address.fromScVal(args[0]).toString(),
    to: Address.fromScVal(args[1]).toString(),
    amount: BigInt(scValToNative(args[2]) as bigint),
  };
}

/**
 * The ledger state behind the look-alike Soroban RPC: accounts and sequence numbers, SAC-like token balances,
 * consumed authorization nonces, and the rules a real network applies to a `transfer` invocation (auth entry
 * matching, ed25519 account signatures over the network-bound preimage, expiration, nonce reuse, balances).
 */
export class LookAlikeLedger {
  readonly networkId: Buffer;
  sequence: number;
  closeTime: number;
  readonly accounts = new Map<string, { seq: bigint }>();
  readonly tokens = new Map<string, LookAlikeToken>();
  /** `address:nonce` → ledger until which the nonce entry lives. */
  readonly nonces = new Map<string, number>();

  constructor(
    readonly passphrase: string,
    startLedger = 1_000_000,
  ) {
    this.networkId = hash(Buffer.from(passphrase));
    this.sequence = startLedger;
    this.closeTime = Math.floor(Date.now() / 1000);
  }

  /** Opens a plain account (master key only); its sequence starts at ledger << 32 as on the real network. */
  createAccount(address: string): void {
    this.accounts.set(address, { seq: BigInt(this.sequence) << 32n });
  }

  /** Deploys a SAC-like token with a fresh contract id. */
  createToken(name: string): LookAlikeToken {
    const token: LookAlikeToken = { contract: StrKey.encodeContract(randomBytes(32)), name, balances: new Map() };
    this.tokens.set(token.contract, token);
    return token;
  }

  /** Closes `count` empty ledgers (5 s each). */
  advance(count: number): void {
    this.sequence += count;
    this.closeTime += 5 * count;
  }

  /** Parses an envelope for this network; fee-bump envelopes are answered with their inner transaction. */
  parse(envelope: string): Transaction {
    const parsed = TransactionBuilder.fromXDR(envelope, this.passphrase);
    return parsed instanceof FeeBumpTransaction ? parsed.innerTransaction : parsed;
  }

  /**
   * Runs the transaction's single `transfer` invocation: recording mode (no auth entries: returns the entry the
   * payer must sign) or enforcing mode (checks every entry the invocation needs). `apply` commits the effects.
   */
  execute(tx: Transaction, atLedger: number, apply: boolean): Execution {
    const op = tx.operations[0] as Operation.InvokeHostFunction | undefined;
    if (tx.operations.length !== 1 || op?.type !== 'invokeHostFunction')
      return { ok: false, error: 'Transaction contains more than one operation or no invokeHostFunction operation' };
    if (op.func.switch().name !== 'hostFunctionTypeInvokeContract')
      return { ok: false, error: hostError('Value, UnexpectedType', 'only contract invocations are supported here') };
    const invoke = op.func.invokeContract();
    const contract = Address.fromScAddress(invoke.contractAddress()).toString();
    const token = this.tokens.get(contract);
    if (!token)
      return {
        ok: false,
        error: hostError('Storage, MissingValue', 'trying to get non-existing value for contract instance'),
      };
    if (invoke.functionName().toString() !== 'transfer')
      return { ok: false, error: hostError('WasmVm, MissingValue', 'trying to invoke non-existent contract function') };
    const transfer = transferArgs(invoke);
    if (!transfer)
      return {
        ok: false,
        error: hostError('Value, UnexpectedType', 'transfer(from: Address, to: Address, amount: i128) expected'),
      };
    const { from, to, amount } = transfer;
    const entries = op.auth ?? [];
    let auth: xdr.SorobanAuthorizationEntry[];
    let nonce: { key: xdr.LedgerKey; id: string; liveUntil: number } | undefined;
    const readWrite = [balanceKey(contract, from), balanceKey(contract, to)];
    if (entries.length === 0) {
      auth = [this.recordedEntry(tx, from, invoke)];
    } else {
      const found = this.authorize(tx, from, invoke, entries, atLedger);
      if (!found.ok) return found;
      auth = entries;
      nonce = found.nonce;
      if (nonce) readWrite.push(nonce.key);
    }
    if (amount < 0n) return { ok: false, error: hostError('Contract, #5', 'negative amount is not allowed') };
    const balance = token.balances.get(from) ?? 0n;
    if (balance < amount)
      return {
        ok: false,
        error: hostError('Contract, #10', `balance is not sufficient to spend: ${balance} < ${amount}`),
      };
    if (StrKey.isValidEd25519PublicKey(to) && !this.accounts.has(to))
      return { ok: false, error: hostError('Contract, #13', 'trustline entry is missing for account') };
    if (apply) {
      if (nonce) this.nonces.set(nonce.id, nonce.liveUntil);
      token.balances.set(from, balance - amount);
      token.balances.set(to, (token.balances.get(to) ?? 0n) + amount);
    }
    return {
      ok: true,
      auth,
      events: [transferEvent(contract, from, to, token.name, amount)],
      readOnly: [instanceKey(contract)],
      readWrite,
    };
  }

  private recordedEntry(tx: Transaction, from: string, invoke: xdr.InvokeContractArgs): xdr.SorobanAuthorizationEntry {
    const rootInvocation = new xdr.SorobanAuthorizedInvocation({
      function: xdr.SorobanAuthorizedFunction.sorobanAuthorizedFunctionTypeContractFn(invoke),
      subInvocations: [],
    });
    if (from === tx.source)
      return new xdr.SorobanAuthorizationEntry({
        credentials: xdr.SorobanCredentials.sorobanCredentialsSourceAccount(),
        rootInvocation,
      });
    const nonce = xdr.Int64.fromString(BigInt.asIntN(64, randomBytes(8).readBigUInt64BE()).toString());
    const credentials = xdr.SorobanCredentials.sorobanCredentialsAddress(
      new xdr.SorobanAddressCredentials({
        address: Address.fromString(from).toScAddress(),
        nonce,
        signatureExpirationLedger: 0,
        signature: xdr.ScVal.scvVoid(),
      }),
    );
    return new xdr.SorobanAuthorizationEntry({ credentials, rootInvocation });
  }

  private authorize(
    tx: Transaction,
    from: string,
    invoke: xdr.InvokeContractArgs,
    entries: xdr.SorobanAuthorizationEntry[],
    atLedger: number,
  ): { ok: true; nonce?: { key: xdr.LedgerKey; id: string; liveUntil: number } } | { ok: false; error: string } {
    const call = invoke.toXDR('base64');
    const entry = entries.find((e) => {
      const fn = e.rootInvocation().function();
      if (fn.switch().name !== 'sorobanAuthorizedFunctionTypeContractFn' || fn.contractFn().toXDR('base64') !== call)
        return false;
      if (e.credentials().switch().name === 'sorobanCredentialsSourceAccount') return tx.source === from;
      return Address.fromScAddress(e.credentials().address().address()).toString() === from;
    });
    if (!entry)
      return { ok: false, error: hostError('Auth, InvalidAction', `Unauthorized function call for address ${from}`) };
    if (entry.credentials().switch().name === 'sorobanCredentialsSourceAccount') return { ok: true };
    const creds = entry.credentials().address();
    const expiration = creds.signatureExpirationLedger();
    if (atLedger > expiration)
      return {
        ok: false,
        error: hostError('Auth, InvalidInput', `signature has expired: ledger ${atLedger} > ${expiration}`),
      };
    const id = `${from}:${creds.nonce().toString()}`;
    if ((this.nonces.get(id) ?? -1) >= atLedger)
      return { ok: false, error: hostError('Auth, ExistingValue', 'nonce already exists for address') };
    if (!this.accountSignatureValid(from, entry))
      return {
        ok: false,
        error: hostError('Auth, InvalidInput', 'failed account authentication with error: signature does not verify'),
      };
    return { ok: true, nonce: { key: nonceKey(from, creds.nonce()), id, liveUntil: expiration } };
  }

  /** A plain account authorizes with one ed25519 signature by its master key over the network-bound preimage. */
  private accountSignatureValid(address: string, entry: xdr.SorobanAuthorizationEntry): boolean {
    if (!StrKey.isValidEd25519PublicKey(address) || !this.accounts.has(address)) return false;
    const creds = entry.credentials().address();
    const signature = creds.signature();
    if (signature.switch().name !== 'scvVec' || (signature.vec() ?? []).length !== 1) return false;
    const fields = new Map((signature.vec()![0]!.map() ?? []).map((e) => [e.key().sym().toString(), e.val()]));
    const publicKey = fields.get('public_key');
    const sig = fields.get('signature');
    if (publicKey?.switch().name !== 'scvBytes' || sig?.switch().name !== 'scvBytes') return false;
    if (!publicKey.bytes().equals(StrKey.decodeEd25519PublicKey(address))) return false;
    const preimage = xdr.HashIdPreimage.envelopeTypeSorobanAuthorization(
      new xdr.HashIdPreimageSorobanAuthorization({
        networkId: this.networkId,
        nonce: creds.nonce(),
        signatureExpirationLedger: creds.signatureExpirationLedger(),
        invocation: entry.rootInvocation(),
      }),
    );
    return Keypair.fromPublicKey(address).verify(hash(preimage.toXDR()), sig.bytes());
  }
}
