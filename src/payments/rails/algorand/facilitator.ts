import type {
  Network,
  PaymentPayload,
  PaymentRequirements,
  SchemeNetworkFacilitator,
  SettleResponse,
  VerifyResponse,
} from '@x402/core/types';
import { Errors } from '@x402/avm/exact/facilitator';
import type { PaymentCode } from '../../../shared/errors.js';
import { isConfirmed } from '../../../shared/algorand-lookup.js';
import { traceCall } from '../rpc-trace.js';
import {
  avmPayloadOf,
  base64,
  decodeGroup,
  expectedGroupId,
  genesisMatches,
  paymentTxnOf,
} from '../../../shared/algorand-txns.js';

/** A refusal found before the official scheme runs: its x402 reason and a message for the payer. */
export type PreCheck = { ok: true } | { ok: false; reason: string; message: string; payer?: string };

/**
 * Checks `@x402/avm` 2.26's facilitator leaves to algod or does not make: every transaction is for the
 * requirement's network (genesis hash, in either id form), the group id is the hash of exactly these
 * transactions, and the group asks the fee payer to sign at most one transaction. Payloads that do not
 * decode are left to the official scheme, which refuses them with its own reasons.
 */
export function precheckAlgorandGroup(
  payload: PaymentPayload,
  requirements: PaymentRequirements,
  feePayers: readonly string[],
): PreCheck {
  const avm = avmPayloadOf(payload);
  if (!avm || avm.paymentIndex < 0 || avm.paymentIndex >= avm.paymentGroup.length || avm.paymentGroup.length > 16)
    return { ok: true };
  const members = decodeGroup(avm.paymentGroup);
  if (!members) return { ok: true };
  const payer = members[avm.paymentIndex]!.txn.sender.toString();
  for (const [i, m] of members.entries()) {
    const genesis = base64(m.txn.genesisHash);
    if (!genesisMatches(requirements.network, genesis)) {
      return {
        ok: false,
        payer,
        reason: Errors.ErrNetworkMismatch,
        message: `Transaction ${i} of the group is for the chain with genesis hash ${genesis || '(none)'}, not ${requirements.network}.`,
      };
    }
  }
  const txns = members.map((m) => m.txn);
  if (txns.length > 1 || txns[0]!.group) {
    const expected = base64(expectedGroupId(txns));
    const wrong = txns.findIndex((t) => base64(t.group) !== expected);
    if (wrong >= 0) {
      return {
        ok: false,
        payer,
        reason: Errors.ErrInvalidGroupId,
        message: `Transaction ${wrong} carries group id ${base64(txns[wrong]!.group) || '(none)'}, but the group's transactions hash to ${expected}.`,
      };
    }
  }
  const ours = txns.filter((t) => feePayers.includes(t.sender.toString()));
  if (ours.length > 1) {
    return {
      ok: false,
      payer,
      reason: Errors.ErrInvalidFeePayer,
      message: `The group asks the fee payer to sign ${ours.length} transactions; exactly one 0-ALGO payment to itself is allowed.`,
    };
  }
  return { ok: true };
}

/** Where a facilitator asks whether a submitted payment was confirmed. */
export interface AlgodAccess {
  /** algod base URL; undefined when the network has none (then a submitted payment stays pending). */
  url: string | undefined;
  timeoutMs: number;
}

/**
 * The official `@x402/avm` facilitator scheme behind `precheckAlgorandGroup`: the same interface, the
 * official checks and settlement, plus the checks above before either verify or settle signs anything.
 * A settlement whose group was submitted but not seen confirmed (submission error, confirmation wait
 * exhausted) is reported as `settlement_pending` with the payment's txid, never as a plain failure: the money
 * may have moved. Settling such a payment again (the core's one retry, reconciliation) asks algod whether
 * that txid is confirmed instead of submitting a second time.
 */
export class CheckedAvmFacilitator implements SchemeNetworkFacilitator {
  readonly scheme = 'exact';
  readonly caipFamily = 'algorand:*';
  /** Txids this process submitted without seeing them confirmed. */
  private readonly submitted = new Set<string>();

  constructor(
    private readonly official: SchemeNetworkFacilitator,
    private readonly feePayers: readonly string[],
    private readonly algod: AlgodAccess,
    /** Submits again a group this process submitted (see algorand-rpc.ts); absent = never. */
    private readonly resend: (txid: string) => Promise<void> = async () => {},
  ) {}

  /** The fee payer address published in `/supported`. */
  getExtra(network: Network): Record<string, unknown> | undefined {
    return this.official.getExtra(network);
  }

  /** The fee payer addresses of this facilitator. */
  getSigners(network: string): string[] {
    return this.official.getSigners(network);
  }

  /**
   * Pre-checks the group, then runs the official verification (decode, payment, fee payer safety, simulate). A refusal
   * that followed an algod failure is algod's failure (thrown: `facilitator_unavailable`), not the payment's.
   */
  async verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    const pre = precheckAlgorandGroup(payload, requirements, this.feePayers);
    if (!pre.ok)
      return {
        isValid: false,
        invalidReason: pre.reason,
        invalidMessage: pre.message,
        ...(pre.payer ? { payer: pre.payer } : {}),
      };
    return traceCall(async (trace) => {
      const result = await this.official.verify(payload, requirements);
      if (!result.isValid && trace.rpcFailure) throw new Error(`algod failed during verification: ${trace.rpcFailure}`);
      return result;
    });
  }

  /** Pre-checks the group, then lets the official scheme verify, sign our fee-payer transaction, submit and confirm. */
  async settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    const pre = precheckAlgorandGroup(payload, requirements, this.feePayers);
    if (!pre.ok) {
      return {
        success: false,
        errorReason: pre.reason,
        errorMessage: pre.message,
        transaction: '',
        network: requirements.network,
        ...(pre.payer ? { payer: pre.payer } : {}),
      };
    }
    const txn = paymentTxnOf(payload);
    const txid = txn?.txID() ?? '';
    if (this.submitted.has(txid)) return this.recheck(txid, txn!.sender.toString(), requirements);
    const { result, rpcFailure } = await traceCall(async (trace) => ({
      result: await this.official.settle(payload, requirements),
      rpcFailure: trace.rpcFailure,
    }));
    const afterSubmit =
      result.errorReason === Errors.ErrConfirmationFailed || result.errorReason === Errors.ErrSettleFailed;
    if (!result.success && !afterSubmit && rpcFailure) {
      return {
        ...result,
        errorReason: 'facilitator_unavailable' satisfies PaymentCode,
        errorMessage: `algod failed before anything was submitted (${rpcFailure}).`,
      };
    }
    if (result.success || !afterSubmit || !result.transaction) return result;
    this.submitted.add(result.transaction);
    return {
      ...result,
      errorReason: 'settlement_pending' satisfies PaymentCode,
      errorMessage: `${result.errorReason}: ${result.errorMessage ?? ''}`,
    };
  }

  /**
   * Settlement of a payment already submitted: a group whose submission went unanswered is submitted again (the same
   * signed bytes: algod applies a txid once, so this can never charge twice, and a group that never arrived gets its
   * chance), then confirmed → settled; otherwise still pending.
   */
  private async recheck(txid: string, payer: string, requirements: PaymentRequirements): Promise<SettleResponse> {
    await this.resend(txid);
    const confirmed = this.algod.url ? await isConfirmed(this.algod.url, txid, this.algod.timeoutMs) : false;
    if (confirmed) {
      this.submitted.delete(txid);
      return { success: true, transaction: txid, network: requirements.network, payer };
    }
    return {
      success: false,
      errorReason: 'settlement_pending' satisfies PaymentCode,
      errorMessage: `Transaction ${txid} was submitted and is not confirmed yet.`,
      transaction: txid,
      network: requirements.network,
      payer,
    };
  }
}
