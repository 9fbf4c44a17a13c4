import {
  Account,
  authorizeEntry,
  Operation,
  TransactionBuilder,
  xdr,
  type Keypair,
  type Transaction,
} from '@stellar/stellar-sdk';
import type { PaymentPayload } from '@x402/core/types';

/** The transaction inside a Stellar `exact` payload. */
export function payloadTransaction(payload: PaymentPayload, passphrase: string): Transaction {
  return TransactionBuilder.fromXDR(
    (payload.payload as { transaction: string }).transaction,
    passphrase,
  ) as Transaction;
}

/** The payload's single contract invocation and its authorization entries. */
export function payloadInvocation(
  payload: PaymentPayload,
  passphrase: string,
): { func: xdr.HostFunction; invoke: xdr.InvokeContractArgs; auth: xdr.SorobanAuthorizationEntry[] } {
  const op = payloadTransaction(payload, passphrase).operations[0] as Operation.InvokeHostFunction;
  return { func: op.func, invoke: op.func.invokeContract(), auth: op.auth ?? [] };
}

/**
 * Rebuilds the payload's transaction with the stellar-sdk — other source account, other operation(s) — keeping its
 * Soroban data, the way a client tampering with a signed payment would.
 */
export function rebuildPayload(
  payload: PaymentPayload,
  passphrase: string,
  change: { source?: string; operations?: xdr.Operation[] },
): PaymentPayload {
  const tx = payloadTransaction(payload, passphrase);
  const source = new Account(change.source ?? tx.source, (BigInt(tx.sequence) - 1n).toString());
  const builder = new TransactionBuilder(source, {
    fee: tx.fee,
    networkPassphrase: passphrase,
    sorobanData: tx.toEnvelope().v1().tx().ext().sorobanData(),
  }).setTimeout(300);
  for (const op of change.operations ?? tx.toEnvelope().v1().tx().operations()) builder.addOperation(op);
  return { ...payload, payload: { transaction: builder.build().toXDR() } };
}

/** An invokeHostFunction operation calling `fn(args)` on a contract, with the given entries (and optional op source). */
export function invokeOperation(
  invoke: xdr.InvokeContractArgs,
  auth: xdr.SorobanAuthorizationEntry[],
  options: { fn?: string; source?: string } = {},
): xdr.Operation {
  const call = new xdr.InvokeContractArgs({
    contractAddress: invoke.contractAddress(),
    functionName: options.fn ?? invoke.functionName(),
    args: invoke.args(),
  });
  return Operation.invokeHostFunction({
    func: xdr.HostFunction.hostFunctionTypeInvokeContract(call),
    auth,
    ...(options.source ? { source: options.source } : {}),
  });
}

/** The payload with its authorization entries replaced. */
export function withAuthEntries(
  payload: PaymentPayload,
  passphrase: string,
  auth: xdr.SorobanAuthorizationEntry[],
): PaymentPayload {
  const { invoke } = payloadInvocation(payload, passphrase);
  return rebuildPayload(payload, passphrase, { operations: [invokeOperation(invoke, auth)] });
}

/** A copy of an address-credential entry with its signature ScVal replaced. */
export function withSignature(
  entry: xdr.SorobanAuthorizationEntry,
  signature: xdr.ScVal,
): xdr.SorobanAuthorizationEntry {
  const copy = xdr.SorobanAuthorizationEntry.fromXDR(entry.toXDR());
  copy.credentials().address().signature(signature);
  return copy;
}

/** A copy of the entry with one bit of its ed25519 signature flipped. */
export function withFlippedSignatureBit(entry: xdr.SorobanAuthorizationEntry): xdr.SorobanAuthorizationEntry {
  const copy = xdr.SorobanAuthorizationEntry.fromXDR(entry.toXDR());
  const fields = copy.credentials().address().signature().vec()![0]!.map()!;
  const sig = fields
    .find((f) => f.key().sym().toString() === 'signature')!
    .val()
    .bytes();
  sig[0] = sig[0]! ^ 1;
  return copy;
}

/** The entry (re)signed by a keypair with the stellar-sdk for a network and expiration (default: unchanged). */
export function resignEntry(
  entry: xdr.SorobanAuthorizationEntry,
  signer: Keypair,
  passphrase: string,
  expiration?: number,
): Promise<xdr.SorobanAuthorizationEntry> {
  return authorizeEntry(
    entry,
    signer,
    expiration ?? entry.credentials().address().signatureExpirationLedger(),
    passphrase,
  );
}

/** The entry rewritten for another address (same nonce, invocation and expiration; unsigned). */
export function entryFor(entry: xdr.SorobanAuthorizationEntry, address: xdr.ScAddress): xdr.SorobanAuthorizationEntry {
  const copy = xdr.SorobanAuthorizationEntry.fromXDR(entry.toXDR());
  copy.credentials().address().address(address);
  copy.credentials().address().signature(xdr.ScVal.scvVoid());
  return copy;
}

/** The entry with source-account credentials (authorizing through whoever submits the transaction). */
export function sourceAccountEntry(entry: xdr.SorobanAuthorizationEntry): xdr.SorobanAuthorizationEntry {
  return new xdr.SorobanAuthorizationEntry({
    credentials: xdr.SorobanCredentials.sorobanCredentialsSourceAccount(),
    rootInvocation: entry.rootInvocation(),
  });
}
