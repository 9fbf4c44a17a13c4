import {
  AccountRole,
  address,
  compileTransaction,
  decompileTransactionMessage,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  partiallySignTransaction,
  type Address,
  type Instruction,
  type KeyPairSigner,
  type Transaction,
} from '@solana/kit';
import type { PaymentPayload } from '@x402/core/types';

/**
 * Tampering with real payments for the refusal tests: each helper starts from a transaction the official client
 * built and signed, changes one thing, and (where the change touches the message) signs it again with the payer's
 * real key, so only the tampered property is wrong.
 */

type Message = ReturnType<typeof decompileTransactionMessage>;

const COMPUTE_BUDGET = address('ComputeBudget111111111111111111111111111111');
const MEMO = address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');

function wireOf(payload: PaymentPayload): Transaction {
  const wire = (payload.payload as { transaction: string }).transaction;
  return getTransactionDecoder().decode(getBase64Encoder().encode(wire));
}

function withWire(payload: PaymentPayload, tx: Transaction): PaymentPayload {
  return { ...payload, payload: { transaction: getBase64EncodedWireTransaction(tx) } };
}

/** The client's message, decompiled (instructions, fee payer, blockhash lifetime). */
export function messageOf(payload: PaymentPayload): Message {
  return decompileTransactionMessage(getCompiledTransactionMessageDecoder().decode(wireOf(payload).messageBytes));
}

/** Rebuilds the payment with an edited message and signs it with the payer's key (and any extra signers). */
export async function resign(
  payload: PaymentPayload,
  payer: KeyPairSigner,
  edit: (m: Message) => Message,
  extraSigners: KeyPairSigner[] = [],
): Promise<PaymentPayload> {
  const tx = compileTransaction(edit(messageOf(payload)) as Parameters<typeof compileTransaction>[0]);
  const signed = await partiallySignTransaction([payer.keyPair, ...extraSigners.map((s) => s.keyPair)], tx);
  return withWire(payload, signed);
}

/** Replaces instruction `index` of a message. */
export function replaceInstruction(m: Message, index: number, ix: Instruction): Message {
  const instructions = [...m.instructions];
  instructions[index] = ix;
  return { ...m, instructions } as Message;
}

/** Appends an instruction to a message. */
export function appendInstruction(m: Message, ix: Instruction): Message {
  return { ...m, instructions: [...m.instructions, ix] } as Message;
}

/** ComputeBudget SetComputeUnitPrice (discriminator 3, u64 microlamports). */
export function computeUnitPrice(microLamports: bigint): Instruction {
  const data = new Uint8Array(9);
  data[0] = 3;
  new DataView(data.buffer).setBigUint64(1, microLamports, true);
  return { programAddress: COMPUTE_BUDGET, data };
}

/** ComputeBudget SetComputeUnitLimit (discriminator 2, u32 units). */
export function computeUnitLimit(units: number): Instruction {
  const data = new Uint8Array(5);
  data[0] = 2;
  new DataView(data.buffer).setUint32(1, units, true);
  return { programAddress: COMPUTE_BUDGET, data };
}

/** A Memo instruction that lists `signer` as a signing account (the Memo program checks listed accounts signed). */
export function memoSignedBy(signer: Address, text = 'hello'): Instruction {
  return {
    programAddress: MEMO,
    accounts: [{ address: signer, role: AccountRole.READONLY_SIGNER }],
    data: new TextEncoder().encode(text),
  };
}

/** Replaces account `index` of the TransferChecked instruction (0 source, 1 mint, 2 destination, 3 authority). */
export function withTransferAccount(m: Message, index: number, to: Address): Message {
  const transfer = m.instructions[2]!;
  const accounts = [...(transfer.accounts ?? [])];
  accounts[index] = { ...accounts[index]!, address: to };
  return replaceInstruction(m, 2, { ...transfer, accounts });
}

/** Overwrites the signature of `signer` in the wire transaction (bytes flipped, or zeroed = missing). */
export function withSignature(payload: PaymentPayload, signer: Address, mode: 'flipped' | 'missing'): PaymentPayload {
  const tx = wireOf(payload);
  const current = tx.signatures[signer];
  if (!current) throw new Error(`${signer} has no signature slot in this transaction`);
  const bytes = Uint8Array.from(current);
  if (mode === 'missing') bytes.fill(0);
  else bytes[0] = bytes[0]! ^ 0xff;
  return withWire(payload, {
    ...tx,
    signatures: { ...tx.signatures, [signer]: mode === 'missing' ? null : bytes },
  } as Transaction);
}

/** Puts arbitrary bytes into the (unsigned) fee payer signature slot: the message, and so the payment, stays the same. */
export function withFeePayerSlotNoise(payload: PaymentPayload, feePayer: Address): PaymentPayload {
  const tx = wireOf(payload);
  const noise = crypto.getRandomValues(new Uint8Array(64));
  return withWire(payload, { ...tx, signatures: { ...tx.signatures, [feePayer]: noise } } as Transaction);
}
