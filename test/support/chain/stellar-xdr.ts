import { createHash } from 'node:crypto';
import { Address, nativeToScVal, StrKey, xdr } from '@stellar/stellar-sdk';

/** Protocol version the look-alike network reports. */
export const PROTOCOL_VERSION = 23;

const zero32 = () => Buffer.alloc(32);

/** A ledger header for sequence/close time, with the hash a real node would chain it by. */
export function ledgerHeader(sequence: number, closeTime: number): { header: xdr.LedgerHeader; hash: Buffer } {
  const header = new xdr.LedgerHeader({
    ledgerVersion: PROTOCOL_VERSION,
    previousLedgerHash: zero32(),
    scpValue: new xdr.StellarValue({
      txSetHash: zero32(),
      closeTime: xdr.Uint64.fromString(String(closeTime)),
      upgrades: [],
      ext: xdr.StellarValueExt.stellarValueBasic(),
    }),
    txSetResultHash: zero32(),
    bucketListHash: zero32(),
    ledgerSeq: sequence,
    totalCoins: xdr.Int64.fromString('1000000000000000000'),
    feePool: xdr.Int64.fromString('0'),
    inflationSeq: 0,
    idPool: xdr.Uint64.fromString('0'),
    baseFee: 100,
    baseReserve: 5_000_000,
    maxTxSetSize: 1000,
    skipList: [zero32(), zero32(), zero32(), zero32()],
    ext: new xdr.LedgerHeaderExt(0),
  });
  return { header, hash: createHash('sha256').update(header.toXDR()).digest() };
}

/** An (empty) ledger close meta for the header, as `getLatestLedger` returns it. */
export function ledgerCloseMeta(header: xdr.LedgerHeader, hash: Buffer): xdr.LedgerCloseMeta {
  return new xdr.LedgerCloseMeta(
    0,
    new xdr.LedgerCloseMetaV0({
      ledgerHeader: new xdr.LedgerHeaderHistoryEntry({ hash, header, ext: new xdr.LedgerHeaderHistoryEntryExt(0) }),
      txSet: new xdr.TransactionSet({ previousLedgerHash: zero32(), txes: [] }),
      txProcessing: [],
      upgradesProcessing: [],
      scpInfo: [],
    }),
  );
}

/** The ledger key of a SEP-41 balance kept in contract storage (`Balance(address)`, persistent). */
export function balanceKey(contract: string, holder: string): xdr.LedgerKey {
  return xdr.LedgerKey.contractData(
    new xdr.LedgerKeyContractData({
      contract: Address.fromString(contract).toScAddress(),
      key: xdr.ScVal.scvVec([xdr.ScVal.scvSymbol('Balance'), Address.fromString(holder).toScVal()]),
      durability: xdr.ContractDataDurability.persistent(),
    }),
  );
}

/** The ledger key of a contract's instance. */
export function instanceKey(contract: string): xdr.LedgerKey {
  return xdr.LedgerKey.contractData(
    new xdr.LedgerKeyContractData({
      contract: Address.fromString(contract).toScAddress(),
      key: xdr.ScVal.scvLedgerKeyContractInstance(),
      durability: xdr.ContractDataDurability.persistent(),
    }),
  );
}

/** The ledger key of the nonce entry a consumed address authorization leaves behind (temporary). */
export function nonceKey(address: string, nonce: xdr.Int64): xdr.LedgerKey {
  return xdr.LedgerKey.contractData(
    new xdr.LedgerKeyContractData({
      contract: Address.fromString(address).toScAddress(),
      key: xdr.ScVal.scvLedgerKeyNonce(new xdr.ScNonceKey({ nonce })),
      durability: xdr.ContractDataDurability.temporary(),
    }),
  );
}

/** Soroban transaction data declaring a footprint and resources, with the resource fee. */
export function sorobanData(
  readOnly: xdr.LedgerKey[],
  readWrite: xdr.LedgerKey[],
  resourceFee: bigint,
): xdr.SorobanTransactionData {
  return new xdr.SorobanTransactionData({
    ext: new xdr.SorobanTransactionDataExt(0),
    resources: new xdr.SorobanResources({
      footprint: new xdr.LedgerFootprint({ readOnly, readWrite }),
      instructions: 2_400_000,
      diskReadBytes: 0,
      writeBytes: 348,
    }),
    resourceFee: xdr.Int64.fromString(resourceFee.toString()),
  });
}

/** The SAC-style `transfer` event: topics [transfer, from, to, asset name], data the i128 amount. */
export function transferEvent(
  contract: string,
  from: string,
  to: string,
  assetName: string,
  amount: bigint,
): xdr.ContractEvent {
  return new xdr.ContractEvent({
    ext: new xdr.ExtensionPoint(0),
    contractId: StrKey.decodeContract(contract) as unknown as xdr.ContractId,
    type: xdr.ContractEventType.contract(),
    body: new xdr.ContractEventBody(
      0,
      new xdr.ContractEventV0({
        topics: [
          xdr.ScVal.scvSymbol('transfer'),
          Address.fromString(from).toScVal(),
          Address.fromString(to).toScVal(),
          xdr.ScVal.scvString(assetName),
        ],
        data: nativeToScVal(amount, { type: 'i128' }),
      }),
    ),
  });
}

/** A transaction result: success with the invocation's result hash, or a failed/refused code. */
export function transactionResult(
  fee: bigint,
  outcome:
    | 'success'
    | 'trapped'
    | 'txBadSeq'
    | 'txBadAuth'
    | 'txNoAccount'
    | 'txInsufficientFee'
    | 'txTooLate'
    | 'txMalformed'
    | 'txSorobanInvalid',
): xdr.TransactionResult {
  const op = (r: xdr.InvokeHostFunctionResult) => [
    xdr.OperationResult.opInner(xdr.OperationResultTr.invokeHostFunction(r)),
  ];
  let result: xdr.TransactionResultResult;
  switch (outcome) {
    case 'success':
      result = xdr.TransactionResultResult.txSuccess(
        op(xdr.InvokeHostFunctionResult.invokeHostFunctionSuccess(zero32())),
      );
      break;
    case 'trapped':
      result = xdr.TransactionResultResult.txFailed(op(xdr.InvokeHostFunctionResult.invokeHostFunctionTrapped()));
      break;
    default:
      result = xdr.TransactionResultResult[outcome]();
  }
  return new xdr.TransactionResult({
    feeCharged: xdr.Int64.fromString(fee.toString()),
    result,
    ext: new xdr.TransactionResultExt(0),
  });
}

/** Transaction meta (v3) carrying the Soroban events of an applied invocation. */
export function transactionMeta(events: xdr.ContractEvent[]): xdr.TransactionMeta {
  return new xdr.TransactionMeta(
    3,
    new xdr.TransactionMetaV3({
      ext: new xdr.ExtensionPoint(0),
      txChangesBefore: [],
      operations: [new xdr.OperationMeta({ changes: [] })],
      txChangesAfter: [],
      sorobanMeta: new xdr.SorobanTransactionMeta({
        ext: new xdr.SorobanTransactionMetaExt(0),
        events,
        returnValue: xdr.ScVal.scvVoid(),
        diagnosticEvents: [],
      }),
    }),
  );
}

/** A plain account entry (master key only, weight 1) with the given sequence number. */
export function accountEntry(address: string, seq: bigint): xdr.LedgerEntryData {
  return xdr.LedgerEntryData.account(
    new xdr.AccountEntry({
      accountId: xdr.PublicKey.publicKeyTypeEd25519(StrKey.decodeEd25519PublicKey(address)),
      balance: xdr.Int64.fromString('100000000000'),
      seqNum: xdr.Int64.fromString(seq.toString()),
      numSubEntries: 0,
      inflationDest: null,
      flags: 0,
      homeDomain: '',
      thresholds: Buffer.from([1, 0, 0, 0]),
      signers: [],
      ext: new xdr.AccountEntryExt(0),
    }),
  );
}

/** The temporary nonce entry as `getLedgerEntries` returns it. */
export function nonceEntry(key: xdr.LedgerKey): xdr.LedgerEntryData {
  const data = key.contractData();
  return xdr.LedgerEntryData.contractData(
    new xdr.ContractDataEntry({
      ext: new xdr.ExtensionPoint(0),
      contract: data.contract(),
      key: data.key(),
      durability: data.durability(),
      val: xdr.ScVal.scvVoid(),
    }),
  );
}
