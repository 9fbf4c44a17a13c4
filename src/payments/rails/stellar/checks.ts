import {
  Address,
  FeeBumpTransaction,
  scValToNative,
  TransactionBuilder,
  type xdr,
  type Operation,
  type Transaction,
} from '@stellar/stellar-sdk';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';

/** The SEP-41 `transfer(from, to, amount)` of a Stellar `exact` payment, decoded once. */
export interface StellarTransfer {
  tx: Transaction;
  op: Operation.InvokeHostFunction;
  invoke: xdr.InvokeContractArgs;
  contract: string;
  fn: string;
  /** `from`, `to` and `amount` when the call has the SEP-41 shape; undefined otherwise. */
  from?: string;
  to?: string;
  amount?: bigint;
}

/** A refused payment: an x402 reason string and a sentence for the caller. */
export interface StellarFailure {
  reason: string;
  message: string;
}

/** The payer's authorization entry as the chain will consume it. */
export interface PayerAuthorization {
  entry: xdr.SorobanAuthorizationEntry;
  address: string;
  /** The i64 nonce the chain makes single-use per address, as a decimal string. */
  nonce: string;
  expirationLedger: number;
}

/** A refused payment as the `{ ok: false }` result of a check. */
export const refusal = (reason: string, message: string): { ok: false } & StellarFailure => ({
  ok: false,
  reason,
  message,
});

/** Decodes the base64 XDR envelope into the plain transaction it must be (not a fee-bump). */
function parseEnvelope(
  envelope: string,
  passphrase: string,
): { ok: true; tx: Transaction } | ({ ok: false } & StellarFailure) {
  try {
    const parsed = TransactionBuilder.fromXDR(envelope, passphrase);
    if (parsed instanceof FeeBumpTransaction)
      return refusal(
        'invalid_exact_stellar_payload_malformed',
        'The transaction is a fee-bump envelope; send the inner transaction.',
      );
    return { ok: true, tx: parsed };
  } catch {
    return refusal(
      'invalid_exact_stellar_payload_malformed',
      'The transaction is not a decodable Stellar transaction envelope.',
    );
  }
}

/** `from`, `to` and `amount` of a contract call with the SEP-41 `transfer` arguments; empty for any other shape. */
function sep41Arguments(invoke: xdr.InvokeContractArgs): Pick<StellarTransfer, 'from' | 'to' | 'amount'> {
  const args = invoke.args();
  if (
    args.length === 3 &&
    args[0]?.switch().name === 'scvAddress' &&
    args[1]?.switch().name === 'scvAddress' &&
    args[2]?.switch().name === 'scvI128'
  ) {
    return {
      from: Address.fromScVal(args[0]).toString(),
      to: Address.fromScVal(args[1]).toString(),
      amount: BigInt(scValToNative(args[2]) as bigint),
    };
  }
  return {};
}

/** Decodes `payload.transaction` (base64 XDR envelope) into the single contract call it must be. */
export function decodeStellarTransfer(
  payload: PaymentPayload,
  passphrase: string,
): { ok: true; transfer: StellarTransfer } | ({ ok: false } & StellarFailure) {
  const envelope = (payload.payload as { transaction?: unknown } | undefined)?.transaction;
  if (typeof envelope !== 'string' || envelope.length === 0) {
    return refusal(
      'invalid_exact_stellar_payload_malformed',
      'The payload has no `transaction` (base64 XDR transaction envelope).',
    );
  }
  const parsed = parseEnvelope(envelope, passphrase);
  if (!parsed.ok) return parsed;
  const { tx } = parsed;
  const op = tx.operations[0];
  if (tx.operations.length !== 1 || op?.type !== 'invokeHostFunction') {
    return refusal(
      'invalid_exact_stellar_payload_wrong_operation',
      `The transaction must hold exactly one invokeHostFunction operation; it holds ${tx.operations.length} (${tx.operations.map((o) => o.type).join(', ')}).`,
    );
  }
  const func = op.func;
  if (func.switch().name !== 'hostFunctionTypeInvokeContract') {
    return refusal(
      'invalid_exact_stellar_payload_wrong_operation',
      'The operation must invoke a contract function (not upload or create a contract).',
    );
  }
  const invoke = func.invokeContract();
  const transfer: StellarTransfer = {
    tx,
    op,
    invoke,
    contract: Address.fromScAddress(invoke.contractAddress()).toString(),
    fn: invoke.functionName().toString(),
    ...sep41Arguments(invoke),
  };
  return { ok: true, transfer };
}

/** The first authorization entry with address credentials of `from` (whether it is the only one is checked elsewhere). */
export function payerAuthorization(transfer: StellarTransfer): PayerAuthorization | undefined {
  for (const entry of transfer.op.auth ?? []) {
    if (entry.credentials().switch().name !== 'sorobanCredentialsAddress') continue;
    const creds = entry.credentials().address();
    const address = Address.fromScAddress(creds.address()).toString();
    if (address !== transfer.from) continue;
    return { entry, address, nonce: creds.nonce().toString(), expirationLedger: creds.signatureExpirationLedger() };
  }
  return undefined;
}

/** Checks the call itself: asset contract, `transfer` with SEP-41 arguments, recipient, amount and who may not pay. */
export function checkTransferCall(
  t: StellarTransfer,
  req: PaymentRequirements,
  facilitators: ReadonlySet<string>,
): StellarFailure | undefined {
  if (facilitators.has(t.tx.source) || (t.op.source !== undefined && facilitators.has(t.op.source))) {
    return {
      reason: 'invalid_exact_stellar_payload_unsafe_tx_or_op_source',
      message: 'The facilitator account may not be the transaction or operation source: it only sponsors fees.',
    };
  }
  if (t.contract !== req.asset) {
    return {
      reason: 'invalid_exact_stellar_payload_wrong_asset',
      message: `The transfer calls contract ${t.contract}; the payment asks for ${req.asset}.`,
    };
  }
  if (t.fn !== 'transfer' || t.from === undefined || t.to === undefined || t.amount === undefined) {
    return {
      reason: 'invalid_exact_stellar_payload_wrong_function_name',
      message: `The call must be transfer(from: Address, to: Address, amount: i128); it is ${t.fn} with ${t.invoke.args().length} argument(s).`,
    };
  }
  if (facilitators.has(t.from)) {
    return {
      reason: 'invalid_exact_stellar_payload_facilitator_is_payer',
      message: 'The facilitator account may not be the payer.',
    };
  }
  if (t.to !== req.payTo) {
    return {
      reason: 'invalid_exact_stellar_payload_wrong_recipient',
      message: `The transfer pays ${t.to}; the payment asks for ${req.payTo}.`,
    };
  }
  if (t.amount !== BigInt(req.amount)) {
    return {
      reason: 'invalid_exact_stellar_payload_wrong_amount',
      message: `The transfer moves ${t.amount}; the price is exactly ${req.amount} (7-decimal units).`,
    };
  }
  return undefined;
}
