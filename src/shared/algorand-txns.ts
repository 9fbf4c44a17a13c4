import algosdk from 'algosdk';
import type { PaymentPayload } from '@x402/core/types';
import { ALGORAND_TESTNET_CAIP2, normalizeAlgorandNetwork } from '@x402/avm';

/** One decoded member of an x402 Algorand payment group. */
export interface GroupMember {
  txn: algosdk.Transaction;
  /** True when the member carries any signature (ed25519, multisig, logic signature). */
  signed: boolean;
}

/** The `exact` AVM payload: base64 msgpack transactions (signed by the payer, ours unsigned) and the payment's index. */
export interface AvmPayload {
  paymentGroup: string[];
  paymentIndex: number;
}

/** The payload's group and payment index when it has the `exact` AVM shape, else undefined. */
export function avmPayloadOf(payload: PaymentPayload): AvmPayload | undefined {
  const inner = payload.payload as Partial<AvmPayload> | undefined;
  if (!inner || !Array.isArray(inner.paymentGroup) || !Number.isInteger(inner.paymentIndex)) return undefined;
  if (!inner.paymentGroup.every((t) => typeof t === 'string')) return undefined;
  return { paymentGroup: inner.paymentGroup, paymentIndex: inner.paymentIndex as number };
}

/** Decodes one base64 msgpack transaction, signed (`SignedTxn`) or bare (`Transaction`); undefined when it is neither. */
export function decodeMember(base64: string): GroupMember | undefined {
  const bytes = Buffer.from(base64, 'base64');
  try {
    const stxn = algosdk.decodeSignedTransaction(bytes);
    if (stxn.txn?.type) return { txn: stxn.txn, signed: Boolean(stxn.sig || stxn.msig || stxn.lsig || stxn.pqsig) };
  } catch {
    // not a signed transaction; try a bare one below
  }
  try {
    const txn = algosdk.decodeUnsignedTransaction(bytes);
    return txn.type ? { txn, signed: false } : undefined;
  } catch {
    return undefined;
  }
}

/** Decodes every member of a group, or undefined when one does not decode. */
export function decodeGroup(group: readonly string[]): GroupMember[] | undefined {
  const out: GroupMember[] = [];
  for (const item of group) {
    const member = decodeMember(item);
    if (!member) return undefined;
    out.push(member);
  }
  return out;
}

/** The payment transaction of an `exact` AVM payload (the member at `paymentIndex`), if it decodes. */
export function paymentTxnOf(payload: PaymentPayload): algosdk.Transaction | undefined {
  const avm = avmPayloadOf(payload);
  const item = avm?.paymentGroup[avm.paymentIndex];
  return item === undefined ? undefined : decodeMember(item)?.txn;
}

/** The group id algod requires: the hash of the members' txids computed with their group field cleared. */
export function expectedGroupId(txns: readonly algosdk.Transaction[]): Uint8Array {
  return algosdk.computeGroupID(
    txns.map((t) => {
      const copy = algosdk.decodeUnsignedTransaction(algosdk.encodeUnsignedTransaction(t));
      copy.group = undefined;
      return copy;
    }),
  );
}

/** Standard base64 of some bytes ('' for none). */
export function base64(bytes: Uint8Array | undefined): string {
  return bytes ? Buffer.from(bytes).toString('base64') : '';
}

/**
 * The CAIP-2 reference of an `algorand:` network id: the genesis hash in the specification's long form
 * (`algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73ktiC1qzkkit8=`) or its first 32 characters in the short form
 * `@x402/avm` uses (`algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73k`).
 */
function reference(network: string): string {
  return network.startsWith('algorand:') ? network.slice('algorand:'.length) : '';
}

/** True when a transaction's genesis hash (base64) belongs to the network id, in either id form. */
export function genesisMatches(network: string, genesisHash: string): boolean {
  const ref = reference(network);
  return (
    ref.length >= 32 &&
    genesisHash.length > 0 &&
    (ref.length === 32 ? genesisHash.startsWith(ref) : genesisHash === ref)
  );
}

/** The official network kind (`mainnet`/`testnet`) of an `algorand:` id in either form, or undefined for other chains. */
export function algorandNetworkKind(networkId: string): 'mainnet' | 'testnet' | undefined {
  try {
    return normalizeAlgorandNetwork(networkId) === ALGORAND_TESTNET_CAIP2 ? 'testnet' : 'mainnet';
  } catch {
    return undefined;
  }
}
