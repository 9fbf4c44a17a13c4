import algosdk from 'algosdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENESIS, startAlgorandEnvironment, type AlgorandEnvironment } from './algorand.js';

let algo: AlgorandEnvironment;
let algod: algosdk.Algodv2;

beforeAll(async () => {
  algo = await startAlgorandEnvironment(2);
  algod = new algosdk.Algodv2('', algo.algod.url);
});
afterAll(async () => algo?.stop());

interface Options {
  feePayerSigns?: 'fee payer' | 'stranger' | 'nobody';
  fees?: [bigint, bigint];
  receiver?: string;
  groupId?: Uint8Array;
}

/** A fee-payer self-payment + payer ASA transfer group, signed with algosdk, as bytes for sendRawTransaction. */
async function group(payerIndex: number, o: Options = {}): Promise<Uint8Array[]> {
  const sp = await algod.getTransactionParams().do();
  const payer = algo.payers[payerIndex]!;
  const fees = o.fees ?? [2000n, 0n];
  const ours = algosdk.makePaymentTxnWithSuggestedParamsFromObject({
    sender: algo.feePayer.addr,
    receiver: algo.feePayer.addr,
    amount: 0n,
    suggestedParams: { ...sp, flatFee: true, fee: fees[0] },
  });
  const transfer = algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({
    sender: payer.addr,
    receiver: o.receiver ?? algo.payTo,
    amount: 1000n,
    assetIndex: algo.assetId,
    suggestedParams: { ...sp, flatFee: true, fee: fees[1] },
  });
  algosdk.assignGroupID([ours, transfer]);
  if (o.groupId) for (const t of [ours, transfer]) t.group = o.groupId;
  const signer = { 'fee payer': algo.feePayer, stranger: algosdk.generateAccount(), nobody: undefined }[
    o.feePayerSigns ?? 'fee payer'
  ];
  const first = signer
    ? algosdk.encodeMsgpack(new algosdk.SignedTransaction({ txn: ours, sig: ours.rawSignTxn(signer.sk) }))
    : algosdk.encodeMsgpack(new algosdk.SignedTransaction({ txn: ours }));
  return [first, transfer.signTxn(payer.sk)];
}

describe('the look-alike algod speaks the algod REST API that algosdk uses', () => {
  it('serves suggested params for Algorand mainnet and account balances', async () => {
    const sp = await algod.getTransactionParams().do();
    expect(Buffer.from(sp.genesisHash!).toString('base64')).toBe(GENESIS.mainnet);
    const account = await algod.accountInformation(algo.payTo).do();
    expect(account.assets?.find((a) => a.assetId === algo.assetId)?.amount).toBe(0n);
  });

  it('commits a correctly signed group, reports it confirmed and moves the ASA', async () => {
    const payTo = algo.balance(algo.payTo);
    const { txid } = await algod.sendRawTransaction(await group(0)).do();
    const confirmed = await algosdk.waitForConfirmation(algod, txid, 2);
    expect(confirmed.confirmedRound).toBe(algo.ledger.round);
    expect(algo.balance(algo.payTo)).toBe(payTo + 1000n);
  });

  it('refuses the same group a second time', async () => {
    const signed = await group(1);
    await algod.sendRawTransaction(signed).do();
    await expect(algod.sendRawTransaction(signed).do()).rejects.toThrow(/already in ledger/);
  });
});

describe('the look-alike algod checks signatures and contents as algod does', () => {
  const cases: Array<[string, () => Promise<Uint8Array[]>, RegExp]> = [
    ['a fee-payer transaction left unsigned', () => group(1, { feePayerSigns: 'nobody' }), /not signed/],
    [
      'a fee-payer transaction signed by another key',
      () => group(1, { feePayerSigns: 'stranger' }),
      /signature didn't pass verification/,
    ],
    [
      'a group id that is not the hash of the group',
      () => group(1, { groupId: new Uint8Array(32).fill(1) }),
      /incomplete group/,
    ],
    ['fees below the minimum for the group', () => group(1, { fees: [1000n, 0n] }), /less than the minimum/],
    [
      'a transfer to an account not opted in to the ASA',
      () => group(1, { receiver: algosdk.generateAccount().addr.toString() }),
      /must optin/,
    ],
  ];
  for (const [label, make, message] of cases) {
    it(`refuses ${label} and changes no balance`, async () => {
      const before = algo.balance(algo.payers[1]!.addr.toString());
      const fee = algo.ledger.algoOf(algo.feePayer.addr.toString());
      await expect(algod.sendRawTransaction(await make()).do()).rejects.toThrow(message);
      expect(algo.balance(algo.payers[1]!.addr.toString())).toBe(before);
      expect(algo.ledger.algoOf(algo.feePayer.addr.toString())).toBe(fee);
    });
  }

  it('refuses a transaction whose last valid round has passed', async () => {
    const signed = await group(1);
    algo.ledger.advance(2000);
    await expect(algod.sendRawTransaction(signed).do()).rejects.toThrow(/txn dead/);
  });
});
