import { x402Client } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { toClientAvmSigner } from '@x402/avm';
import { ExactAvmScheme } from '@x402/avm/exact/client';
import algosdk from 'algosdk';
import type { AlgorandLedger } from './algorand-ledger.js';

/** Pays a challenge with the official client (`x402Client` + `@x402/avm` `ExactAvmScheme`) on the given network. */
export async function officialAlgorandPayment(
  payer: algosdk.Account,
  challenge: PaymentRequired,
  network: string,
  algodUrl: string,
): Promise<PaymentPayload> {
  const client = new x402Client((_v, reqs) => reqs.find((r) => r.network === network) ?? reqs[0]!);
  // The look-alike's ASA is not one of the SDK's default assets, so allow it explicitly.
  client.setSpendControls({ allowedAssets: true });
  const signer = toClientAvmSigner(Buffer.from(payer.sk).toString('base64'));
  client.register('algorand:*', new ExactAvmScheme(signer, { algodUrl }) as never);
  return client.createPaymentPayload(challenge);
}

/** Pays one requirement with the official client (wrapped in a one-entry challenge). */
export function officialAlgorandPaymentFor(
  payer: algosdk.Account,
  accepted: PaymentRequirements,
  algodUrl: string,
): Promise<PaymentPayload> {
  const challenge: PaymentRequired = {
    x402Version: 2,
    resource: { url: 'https://tollbooth.test/api/annuity', description: 'test', mimeType: 'application/json' },
    accepts: [accepted],
  };
  return officialAlgorandPayment(payer, challenge, accepted.network, algodUrl);
}

/** Changes to the group the official client would build (fee-payer abuse, group id and network tampering). */
export interface GroupOverrides {
  feePayerTxn?: { amount?: bigint; receiver?: string; closeRemainderTo?: string; rekeyTo?: string; fee?: bigint };
  /** Replaces our 0-ALGO self-payment by an ASA transfer from us to the payer (a group asking us to sign something else). */
  feePayerSendsAsset?: boolean;
  /** Adds a second 0-ALGO self-payment from the fee payer for us to sign. */
  extraFeePayerTxn?: boolean;
  /** A group id other than the group's hash (signed by the payer all the same). */
  groupId?: Uint8Array;
  genesisHash?: string;
  /** Last valid round of every member (default: 10 rounds from now, as the official client signs). */
  lastValid?: bigint;
}

/**
 * Builds and signs an `exact` payment group with algosdk the way `@x402/avm` 2.26's client does (fee-payer
 * 0-ALGO self-payment first carrying the pooled fee, then the payer's `axfer` with fee 0; one group id; the
 * payer signs only its own transaction), with optional overrides for the tampering tests.
 */
export function buildAlgorandPayment(
  ledger: AlgorandLedger,
  payer: algosdk.Account,
  accepted: PaymentRequirements,
  o: GroupOverrides = {},
): PaymentPayload {
  const feePayer = (accepted.extra as { feePayer: string }).feePayer;
  const base = {
    fee: 0n,
    minFee: ledger.minFee,
    flatFee: true,
    firstValid: ledger.round,
    lastValid: o.lastValid ?? ledger.round + 10n,
    genesisHash: o.genesisHash ? new Uint8Array(Buffer.from(o.genesisHash, 'base64')) : ledger.genesisHash,
    genesisID: ledger.genesisId,
  };
  const note = (what: string) => new TextEncoder().encode(`x402-${what}-${Date.now()}`);
  const size = o.extraFeePayerTxn ? 3n : 2n;
  const f = o.feePayerTxn ?? {};
  const ours = o.feePayerSendsAsset
    ? algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({
        sender: feePayer,
        receiver: payer.addr,
        amount: 1n,
        assetIndex: BigInt(accepted.asset),
        suggestedParams: { ...base, fee: ledger.minFee * size },
      })
    : algosdk.makePaymentTxnWithSuggestedParamsFromObject({
        sender: feePayer,
        receiver: f.receiver ?? feePayer,
        amount: f.amount ?? 0n,
        note: note('fee-payer'),
        ...(f.closeRemainderTo ? { closeRemainderTo: f.closeRemainderTo } : {}),
        ...(f.rekeyTo ? { rekeyTo: f.rekeyTo } : {}),
        suggestedParams: { ...base, fee: f.fee ?? ledger.minFee * size },
      });
  const txns = [
    ours,
    algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({
      sender: payer.addr,
      receiver: accepted.payTo,
      amount: BigInt(accepted.amount),
      assetIndex: BigInt(accepted.asset),
      note: note('payment-v2'),
      suggestedParams: base,
    }),
  ];
  if (o.extraFeePayerTxn) {
    txns.push(
      algosdk.makePaymentTxnWithSuggestedParamsFromObject({
        sender: feePayer,
        receiver: feePayer,
        amount: 0n,
        suggestedParams: base,
      }),
    );
  }
  return { x402Version: 2, accepted, payload: { paymentGroup: grouped(txns, payer, o.groupId), paymentIndex: 1 } };
}

/** One group id over `txns` (or the given one), the payer's own transactions signed, the rest left unsigned; base64. */
function grouped(txns: algosdk.Transaction[], payer: algosdk.Account, groupId?: Uint8Array): string[] {
  algosdk.assignGroupID(txns);
  if (groupId) for (const t of txns) t.group = groupId;
  return txns.map((t) =>
    Buffer.from(
      t.sender.toString() === payer.addr.toString() ? t.signTxn(payer.sk) : algosdk.encodeUnsignedTransaction(t),
    ).toString('base64'),
  );
}

function withPaymentTxn(
  payload: PaymentPayload,
  replace: (stxn: algosdk.SignedTransaction) => Uint8Array,
): PaymentPayload {
  const inner = payload.payload as { paymentGroup: string[]; paymentIndex: number };
  const group = [...inner.paymentGroup];
  const stxn = algosdk.decodeSignedTransaction(Buffer.from(group[inner.paymentIndex]!, 'base64'));
  group[inner.paymentIndex] = Buffer.from(replace(stxn)).toString('base64');
  return { ...payload, payload: { ...inner, paymentGroup: group } };
}

/** The same payment with its payment transaction's signature stripped. */
export function unsignedPayment(payload: PaymentPayload): PaymentPayload {
  return withPaymentTxn(payload, (s) => algosdk.encodeUnsignedTransaction(s.txn));
}

/** The same payment with one bit of its signature flipped. */
export function corruptedSignature(payload: PaymentPayload): PaymentPayload {
  return withPaymentTxn(payload, (s) => {
    const sig = Uint8Array.from(s.sig!);
    sig[7] = sig[7]! ^ 0x01;
    return algosdk.encodeMsgpack(new algosdk.SignedTransaction({ txn: s.txn, sig }));
  });
}

/** The same payment transaction signed by another key than its sender's. */
export function signedByStranger(payload: PaymentPayload): PaymentPayload {
  const stranger = algosdk.generateAccount();
  return withPaymentTxn(payload, (s) =>
    algosdk.encodeMsgpack(new algosdk.SignedTransaction({ txn: s.txn, sig: s.txn.rawSignTxn(stranger.sk) })),
  );
}
