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
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { maxExpirationLedger, MIN_REMAINING_LEDGERS } from './network.js';

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

const fail = (reason: string, message: string): { ok: false } & StellarFailure => ({ ok: false, reason, message });

/** Decodes `payload.transaction` (base64 XDR envelope) into the single contract call it must be. */
export function decodeStellarTransfer(
  payload: PaymentPayload,
  passphrase: string,
): { ok: true; transfer: StellarTransfer } | ({ ok: false } & StellarFailure) {
  const envelope = (payload.payload as { transaction?: unknown } | undefined)?.transaction;
  if (typeof envelope !== 'string' || envelope.length === 0) {
    return fail(
      'invalid_exact_stellar_payload_malformed',
      'The payload has no `transaction` (base64 XDR transaction envelope).',
    );
  }
  let tx: Transaction;
  try {
    const parsed = TransactionBuilder.fromXDR(envelope, passphrase);
    if (parsed instanceof FeeBumpTransaction)
      return fail(
        'invalid_exact_stellar_payload_malformed',
        'The transaction is a fee-bump envelope; send the inner transaction.',
      );
    tx = parsed;
  } catch {
    return fail(
      'invalid_exact_stellar_payload_malformed',
      'The transaction is not a decodable Stellar transaction envelope.',
    );
  }
  const op = tx.operations[0];
  if (tx.operations.length !== 1 || op?.type !== 'invokeHostFunction') {
    return fail(
      'invalid_exact_stellar_payload_wrong_operation',
      `The transaction must hold exactly one invokeHostFunction operation; it holds ${tx.operations.length} (${tx.operations.map((o) => o.type).join(', ')}).`,
    );
  }
  const func = op.func;
  if (func.switch().name !== 'hostFunctionTypeInvokeContract') {
    return fail(
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
  };
  const args = invoke.args();
  if (
    args.length === 3 &&
    args[0]?.switch().name === 'scvAddress' &&
    args[1]?.switch().name === 'scvAddress' &&
    args[2]?.switch().name === 'scvI128'
  ) {
    transfer.from = Address.fromScVal(args[0]).toString();
    transfer.to = Address.fromScVal(args[1]).toString();
    transfer.amount = BigInt(scValToNative(args[2]) as bigint);
  }
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

function sameInvocation(a: xdr.SorobanAuthorizedInvocation, invoke: xdr.InvokeContractArgs): boolean {
  const fn = a.function();
  if (fn.switch().name !== 'sorobanAuthorizedFunctionTypeContractFn') return false;
  return fn.contractFn().toXDR('base64') === invoke.toXDR('base64');
}

/** The ed25519 signatures of an account credential: `Vec<{ public_key: BytesN<32>, signature: BytesN<64> }>`. */
function accountSignatures(signature: xdr.ScVal): { publicKey: Buffer; signature: Buffer }[] | undefined {
  if (signature.switch().name !== 'scvVec') return undefined;
  const out: { publicKey: Buffer; signature: Buffer }[] = [];
  for (const item of signature.vec() ?? []) {
    if (item.switch().name !== 'scvMap') return undefined;
    const fields = new Map(
      (item.map() ?? []).map((e) => [e.key().switch().name === 'scvSymbol' ? e.key().sym().toString() : '', e.val()]),
    );
    const pk = fields.get('public_key');
    const sig = fields.get('signature');
    if (pk?.switch().name !== 'scvBytes' || sig?.switch().name !== 'scvBytes') return undefined;
    out.push({ publicKey: pk.bytes(), signature: sig.bytes() });
  }
  return out.length > 0 ? out : undefined;
}

/** SHA-256 of the authorization preimage a Soroban address credential signs (network id, nonce, expiration, invocation). */
export function authorizationPayload(entry: xdr.SorobanAuthorizationEntry, passphrase: string): Buffer {
  const creds = entry.credentials().address();
  const preimage = xdr.HashIdPreimage.envelopeTypeSorobanAuthorization(
    new xdr.HashIdPreimageSorobanAuthorization({
      networkId: hash(Buffer.from(passphrase)),
      nonce: creds.nonce(),
      signatureExpirationLedger: creds.signatureExpirationLedger(),
      invocation: entry.rootInvocation(),
    }),
  );
  return hash(preimage.toXDR());
}

/**
 * Checks the authorization entries: address credentials only, the facilitator in none, exactly one entry, for
 * `from`, authorizing exactly this call with no sub-invocations, expiring neither too soon nor beyond the bound,
 * and (for a G… account) carrying ed25519 signatures that verify over the entry on this network. Whether the
 * signing keys carry enough weight on the account is the chain's to say (simulation, then execution).
 */
export function checkAuthorization(
  t: StellarTransfer,
  req: PaymentRequirements,
  facilitators: ReadonlySet<string>,
  currentLedger: number,
  passphrase: string,
): ({ ok: true } & PayerAuthorization) | ({ ok: false } & StellarFailure) {
  const entries = t.op.auth ?? [];
  if (entries.length === 0)
    return fail(
      'invalid_exact_stellar_payload_no_auth_entries',
      'The transaction carries no Soroban authorization entry; sign the payer’s entry for the transfer.',
    );
  for (const entry of entries) {
    if (entry.credentials().switch().name !== 'sorobanCredentialsAddress') {
      return fail(
        'invalid_exact_stellar_payload_unsupported_credential_type',
        'Only address credentials are accepted: the payer authorizes the transfer with its own signed entry, never through the transaction source.',
      );
    }
    if (facilitators.has(Address.fromScAddress(entry.credentials().address().address()).toString())) {
      return fail(
        'invalid_exact_stellar_payload_facilitator_in_auth',
        'An authorization entry names the facilitator account; it only sponsors fees and authorizes nothing.',
      );
    }
  }
  const auth = payerAuthorization(t);
  if (!auth || entries.length !== 1)
    return fail(
      'invalid_exact_stellar_payload_auth_mismatch',
      'The transaction must carry exactly one authorization entry, with address credentials of `from`.',
    );
  if (!sameInvocation(auth.entry.rootInvocation(), t.invoke)) {
    return fail(
      'invalid_exact_stellar_payload_auth_mismatch',
      'The authorization entry authorizes a different call than transfer(from, payTo, amount) on the asset.',
    );
  }
  if (auth.entry.rootInvocation().subInvocations().length > 0) {
    return fail(
      'invalid_exact_stellar_payload_has_subinvocations',
      'The authorization entry may not authorize sub-invocations.',
    );
  }
  if (auth.expirationLedger < currentLedger + MIN_REMAINING_LEDGERS) {
    return fail(
      'invalid_exact_stellar_signature_expired',
      `The authorization expires at ledger ${auth.expirationLedger}; the network is at ${currentLedger}. Sign a new one.`,
    );
  }
  const bound = maxExpirationLedger(currentLedger, req.maxTimeoutSeconds);
  if (auth.expirationLedger > bound) {
    return fail(
      'invalid_exact_stellar_signature_expiration_too_far',
      `The authorization expires at ledger ${auth.expirationLedger}; at most ${bound} is accepted (maxTimeoutSeconds ${req.maxTimeoutSeconds}).`,
    );
  }
  const signature = auth.entry.credentials().address().signature();
  if (signature.switch().name === 'scvVoid')
    return fail(
      'invalid_exact_stellar_payload_missing_payer_signature',
      'The payer’s authorization entry is not signed.',
    );
  if (StrKey.isValidEd25519PublicKey(auth.address)) {
    const signatures = accountSignatures(signature);
    const payload = authorizationPayload(auth.entry, passphrase);
    const valid = signatures?.every(
      (s) =>
        s.publicKey.length === 32 &&
        Keypair.fromPublicKey(StrKey.encodeEd25519PublicKey(s.publicKey)).verify(payload, s.signature),
    );
    if (!valid)
      return fail(
        'invalid_exact_stellar_payload_bad_payer_signature',
        'The payer’s signature does not verify over this authorization entry on this network.',
      );
  }
  return { ok: true, ...auth };
}

/** The amount of a SEP-41 / SAC transfer event's data: an i128, or a map with `amount` (muxed destinations). */
function eventAmount(data: xdr.ScVal): bigint | undefined {
  const value: unknown = scValToNative(data);
  if (typeof value === 'bigint') return value;
  const amount = (value as { amount?: unknown } | null)?.amount;
  return typeof amount === 'bigint' ? amount : undefined;
}

/**
 * Checks a successful simulation's contract events: exactly one `transfer` event, emitted by the asset contract,
 * moving exactly `amount` from `from` to `payTo`, and no other contract event (no other balance change).
 */
export function checkTransferEvents(
  events: readonly xdr.DiagnosticEvent[],
  t: StellarTransfer,
  req: PaymentRequirements,
): StellarFailure | undefined {
  try {
    return checkEvents(events, t, req);
  } catch {
    return {
      reason: 'invalid_exact_stellar_payload_event_malformed',
      message: 'The simulated call emits an event that cannot be read as a SEP-41 transfer.',
    };
  }
}

function checkEvents(
  events: readonly xdr.DiagnosticEvent[],
  t: StellarTransfer,
  req: PaymentRequirements,
): StellarFailure | undefined {
  const transfers: { from: string; to: string; amount: bigint | undefined }[] = [];
  for (const diagnostic of events) {
    const event = diagnostic.event();
    if (event.type().name !== 'contract') continue;
    const topics = event.body().v0().topics();
    const name = topics[0]?.switch().name === 'scvSymbol' ? topics[0].sym().toString() : '';
    const contractId = event.contractId();
    if (name !== 'transfer' || topics.length < 3 || !contractId) {
      return {
        reason: 'invalid_exact_stellar_payload_event_not_transfer',
        message: `The simulated call emits a "${name}" event besides the transfer.`,
      };
    }
    if (Address.fromScAddress(xdr.ScAddress.scAddressTypeContract(contractId)).toString() !== req.asset) {
      return {
        reason: 'invalid_exact_stellar_payload_event_wrong_asset',
        message: 'The simulated transfer event comes from another contract than the asset.',
      };
    }
    transfers.push({
      from: Address.fromScVal(topics[1]!).toString(),
      to: Address.fromScVal(topics[2]!).toString(),
      amount: eventAmount(event.body().v0().data()),
    });
  }
  if (transfers.length !== 1) {
    return {
      reason:
        transfers.length === 0
          ? 'invalid_exact_stellar_payload_no_transfer_events'
          : 'invalid_exact_stellar_payload_multiple_transfers',
      message: `The simulated call emits ${transfers.length} transfer events; exactly one is expected.`,
    };
  }
  const [event] = transfers as [(typeof transfers)[number]];
  if (event.from !== t.from || event.to !== req.payTo || event.amount !== BigInt(req.amount)) {
    return {
      reason: 'invalid_exact_stellar_payload_event_mismatch',
      message: 'The simulated transfer event does not move exactly the price from the payer to the pay-to address.',
    };
  }
  return undefined;
}
