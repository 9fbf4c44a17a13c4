import {
  address,
  decompileTransactionMessage,
  getAddressEncoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getProgramDerivedAddress,
  getTransactionDecoder,
  type Address,
  type Transaction,
} from '@solana/kit';
import type { PaymentPayload } from '@x402/core/types';
import {
  assertFeePayerIsolated,
  getTokenPayerFromTransaction,
  TOKEN_2022_PROGRAM_ADDRESS,
  TOKEN_PROGRAM_ADDRESS,
  transactionMessageHash,
  type FacilitatorSvmSigner,
} from '@x402/svm';

/** A Solana `exact` payment's transaction, decoded once. */
export interface SvmPaymentTransaction {
  transaction: Transaction;
  compiled: ReturnType<ReturnType<typeof getCompiledTransactionMessageDecoder>['decode']>;
  /** SHA-256 of the message bytes (base64): what the payer signed, so what identifies the payment. */
  messageHash: string;
  /** The transaction's fee payer (first static account). */
  feePayer: string;
  /** Owner of the transfer's source account (the TransferChecked authority); '' when there is no token transfer. */
  tokenPayer: string;
  /** The recent blockhash the transaction lives by. */
  blockhash: string;
}

/** Decodes `payload.transaction` (base64 wire transaction) without logging; undefined when it is not one. */
export function decodeSvmPayment(payload: PaymentPayload): SvmPaymentTransaction | undefined {
  const wire = (payload.payload as { transaction?: unknown } | undefined)?.transaction;
  if (typeof wire !== 'string' || wire.length === 0) return undefined;
  try {
    const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
    const compiled = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
    const feePayer = compiled.staticAccounts[0];
    if (!feePayer) return undefined;
    return {
      transaction,
      compiled,
      messageHash: transactionMessageHash(transaction),
      feePayer,
      tokenPayer: getTokenPayerFromTransaction(transaction),
      blockhash: compiled.lifetimeToken,
    };
  } catch {
    return undefined;
  }
}

const ASSOCIATED_TOKEN_PROGRAM = address('ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL');

const SYSTEM_PROGRAM = '11111111111111111111111111111111';
/** The System program's `AdvanceNonceAccount` instruction index (u32, little endian). */
const ADVANCE_NONCE_ACCOUNT = 4;

/**
 * True when the transaction lives by a durable nonce (its first instruction is the System program's
 * `AdvanceNonceAccount`): it then never expires with its blockhash, so it could land at any later time.
 */
export function usesDurableNonce(tx: SvmPaymentTransaction): boolean {
  const first = (tx.compiled as { instructions?: readonly { programAddressIndex: number; data?: Uint8Array }[] })
    .instructions?.[0];
  if (!first || tx.compiled.staticAccounts[first.programAddressIndex] !== SYSTEM_PROGRAM) return false;
  const data = first.data;
  return !!data && data.length >= 4 && data[0] === ADVANCE_NONCE_ACCOUNT && !data[1] && !data[2] && !data[3];
}
const TRANSFER_CHECKED = 12;

async function associatedTokenAccount(owner: Address, mint: Address, tokenProgram: Address): Promise<string> {
  const encoder = getAddressEncoder();
  const [ata] = await getProgramDerivedAddress({
    programAddress: ASSOCIATED_TOKEN_PROGRAM,
    seeds: [encoder.encode(owner), encoder.encode(tokenProgram), encoder.encode(mint)],
  });
  return ata;
}

/** Reason the library gives when the fee payer would move funds; reused for the cases it does not look at. */
export const FEE_PAYER_TRANSFERRING_FUNDS = 'invalid_exact_svm_payload_transaction_fee_payer_transferring_funds';
/** Reason given when our fee payer appears in any other instruction (as account or program). */
export const FEE_PAYER_NOT_ISOLATED = 'invalid_exact_svm_payload_fee_payer_not_isolated';

/**
 * The fee-payer safety rules (docs/payments.md#solana-exact), checked before the library's own: our fee payer is neither
 * the transfer authority nor the owner of its source (its associated token account), and appears in no other
 * instruction. @x402/svm 2.27's standard path checks the authority only. Returns the violated rule, or undefined.
 */
export async function feePayerAbuse(
  tx: SvmPaymentTransaction,
  ours: readonly string[],
  signer: FacilitatorSvmSigner,
  network: string,
): Promise<{ reason: string; message: string } | undefined> {
  let instructions: ReturnType<typeof decompileTransactionMessage>['instructions'] = [];
  try {
    instructions = decompileTransactionMessage(tx.compiled).instructions;
  } catch {
    // Address lookup tables: only assertFeePayerIsolated below can resolve them.
  }
  for (const ix of instructions) {
    const program = ix.programAddress.toString();
    if (
      (program !== TOKEN_PROGRAM_ADDRESS && program !== TOKEN_2022_PROGRAM_ADDRESS) ||
      ix.data?.[0] !== TRANSFER_CHECKED
    )
      continue;
    const [source, mint, , authority] = ix.accounts ?? [];
    for (const feePayer of ours) {
      if (authority?.address === feePayer)
        return { reason: FEE_PAYER_TRANSFERRING_FUNDS, message: `the fee payer ${feePayer} is the transfer authority` };
      if (
        source &&
        mint &&
        source.address === (await associatedTokenAccount(address(feePayer), mint.address, address(program)))
      ) {
        return {
          reason: FEE_PAYER_TRANSFERRING_FUNDS,
          message: `the transfer's source is the fee payer ${feePayer}'s token account`,
        };
      }
    }
  }
  for (const feePayer of ours) {
    try {
      await assertFeePayerIsolated(tx.transaction, feePayer, signer, network);
    } catch (err) {
      return { reason: FEE_PAYER_NOT_ISOLATED, message: (err as Error).message.replace(/^[a-z_]+: /, '') };
    }
  }
  return undefined;
}
