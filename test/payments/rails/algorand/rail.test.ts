import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { Errors } from '@x402/avm/exact/facilitator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../../../src/config/config.js';
import { BASE_MAINNET, DEFAULT_NETWORKS, type NetworkEntry } from '../../../../src/shared/networks.js';
import { algorandExactRail } from '../../../../src/payments/rails/algorand/rail.js';
import { algorandNetworkKind, genesisMatches } from '../../../../src/shared/algorand-txns.js';
import { acceptsFor } from '../../../../src/payments/challenges/requirements.js';
import { annuity } from '../../../../tools/annuity.js';
import { GENESIS, startAlgorandEnvironment, type AlgorandEnvironment } from '../../../support/chain/algorand.js';
import {
  buildAlgorandPayment,
  corruptedSignature,
  officialAlgorandPaymentFor,
  signedByStranger,
  unsignedPayment,
  type GroupOverrides,
} from '../../../support/chain/algorand-payer.js';

let algo: AlgorandEnvironment;
let testnet: AlgorandEnvironment;
let config: Config;
let facilitator: x402Facilitator;
let registered: string[];
let req: PaymentRequirements;

beforeAll(async () => {
  algo = await startAlgorandEnvironment(6);
  testnet = await startAlgorandEnvironment(1, 'testnet');
  config = loadConfig({ ...algo.env, LOG_LEVEL: 'silent' });
  facilitator = new x402Facilitator();
  registered = algorandExactRail.registerInProcess(
    facilitator,
    config.networks.filter((n) => n.family === 'algorand'),
    config,
  );
  req = acceptsFor(config, annuity).find((a) => a.network === algo.network)!;
});
afterAll(async () => {
  await algo?.stop();
  await testnet?.stop();
});

const feePayerAddress = () => algo.feePayer.addr.toString();
const pay = (i: number, accepted: PaymentRequirements = req) =>
  officialAlgorandPaymentFor(algo.payers[i]!, accepted, algo.algod.url);
const paymentTxid = (p: PaymentPayload) => {
  const ok = algorandExactRail.identify(p, req);
  if (!ok.ok) throw new Error(ok.message);
  return ok.replayKey.slice('algorand-exact:'.length);
};

describe('the Algorand exact rail with the official @x402/avm schemes', () => {
  it('registers the in-process facilitator for the configured network and publishes our fee payer', () => {
    expect(registered).toEqual([algo.network]);
    const kinds = facilitator.getSupported().kinds.filter((k) => k.network === algo.network);
    expect(kinds).toEqual([expect.objectContaining({ scheme: 'exact', extra: { feePayer: feePayerAddress() } })]);
    expect(req).toMatchObject({
      asset: algo.assetId.toString(),
      payTo: algo.payTo,
      extra: { feePayer: feePayerAddress(), tag: 'tollbooth' },
    });
  });

  it('verifies and settles an official client payment: the ledger moves the price and we pay only the pooled fee', async () => {
    const payer = algo.payers[0]!.addr.toString();
    const before = {
      payer: algo.balance(payer),
      payTo: algo.balance(algo.payTo),
      fee: algo.ledger.algoOf(feePayerAddress()),
    };
    const payment = await pay(0);
    const identified = algorandExactRail.identify(payment, req);
    expect(identified).toEqual({ ok: true, replayKey: expect.stringMatching(/^algorand-exact:[A-Z2-7]{52}$/), payer });
    expect(await facilitator.verify(payment, req)).toEqual({ isValid: true, payer });
    const settled = await facilitator.settle(payment, req);
    expect(settled).toMatchObject({ success: true, network: algo.network, payer, transaction: paymentTxid(payment) });
    expect(algo.balance(payer)).toBe(before.payer - BigInt(req.amount));
    expect(algo.balance(algo.payTo)).toBe(before.payTo + BigInt(req.amount));
    expect(algo.ledger.algoOf(feePayerAddress())).toBe(before.fee - 2n * algo.ledger.minFee);
    const [ours, transfer] = algo.ledger.accepted.at(-1)!;
    expect(ours!.txn.sender.toString()).toBe(feePayerAddress());
    expect(ours!.sig).toBeDefined();
    expect(transfer!.txn.txID()).toBe(settled.transaction);
  });

  it('refuses to settle the same group twice: the ledger already holds its txid', async () => {
    const payment = await pay(1);
    expect((await facilitator.settle(payment, req)).success).toBe(true);
    const count = algo.ledger.accepted.length;
    const again = await facilitator.settle(payment, req);
    expect(again).toMatchObject({
      success: false,
      errorReason: Errors.ErrSimulationFailed,
      errorMessage: expect.stringMatching(/already in ledger/),
    });
    expect(algo.ledger.accepted.length).toBe(count);
  });

  it('lets 5 concurrent settlements of one payment land exactly once', async () => {
    const payment = await pay(2);
    const payTo = algo.balance(algo.payTo);
    const results = await Promise.all(Array.from({ length: 5 }, () => facilitator.settle(payment, req)));
    expect(results.filter((r) => r.success)).toHaveLength(1);
    expect(results.filter((r) => !r.success).every((r) => /already in ledger/.test(r.errorMessage ?? ''))).toBe(true);
    expect(algo.balance(algo.payTo)).toBe(payTo + BigInt(req.amount));
  });

  it('settles a group built with algosdk exactly as the official client builds it (the baseline of the abuse cases)', async () => {
    const payment = buildAlgorandPayment(algo.ledger, algo.payers[3]!, req);
    expect(await facilitator.verify(payment, req)).toMatchObject({ isValid: true });
    expect(await facilitator.settle(payment, req)).toMatchObject({ success: true });
  });

  it('refuses a payload whose payment transaction does not decode, before anything is claimed', () => {
    const refused = algorandExactRail.identify(
      { x402Version: 2, accepted: req, payload: { paymentGroup: ['bm90IGEgdHhu'], paymentIndex: 0 } },
      req,
    );
    expect(refused).toMatchObject({ ok: false, message: expect.stringMatching(/paymentGroup/) });
  });
});

describe('tampered Algorand payments are refused with their reason and nothing is submitted', () => {
  /** A group built with algosdk as the official client does, changed by `o` (given another payer's address as "someone else"). */
  const hand = (o: (stranger: string) => GroupOverrides) => async () =>
    buildAlgorandPayment(algo.ledger, algo.payers[4]!, req, o(algo.payers[5]!.addr.toString()));
  const echoing = (p: PaymentPayload): PaymentPayload => ({ ...p, accepted: req });
  const cases: Array<[string, () => Promise<PaymentPayload>, string, RegExp?]> = [
    [
      'an amount below the price',
      async () => echoing(await pay(4, { ...req, amount: '999' })),
      Errors.ErrAmountMismatch,
    ],
    [
      'another receiver',
      async () => echoing(await pay(4, { ...req, payTo: algo.payers[5]!.addr.toString() })),
      Errors.ErrReceiverMismatch,
    ],
    [
      'another ASA',
      async () => echoing(await pay(4, { ...req, asset: String(algo.ledger.createAsset(algo.payTo, 1_000_000n, 6)) })),
      Errors.ErrAssetMismatch,
    ],
    [
      'transactions for another chain (testnet genesis)',
      async () => echoing(await officialAlgorandPaymentFor(testnet.payers[0]!, req, testnet.algod.url)),
      Errors.ErrNetworkMismatch,
      /genesis hash/,
    ],
    [
      'an accepted entry naming another network',
      async () => ({
        ...(await pay(4)),
        accepted: { ...req, network: `algorand:${GENESIS.testnet}` as PaymentRequirements['network'] },
      }),
      Errors.ErrNetworkMismatch,
    ],
    ['an unsigned payment transaction', async () => unsignedPayment(await pay(4)), Errors.ErrUnsignedNonFacilitator],
    ['a corrupted signature', async () => corruptedSignature(await pay(4)), Errors.ErrInvalidSignature],
    [
      'a signature by another key than the sender',
      async () => signedByStranger(await pay(4)),
      Errors.ErrInvalidSignature,
    ],
    [
      'a group id that is not the hash of the group',
      hand(() => ({ groupId: new Uint8Array(32).fill(7) })),
      Errors.ErrInvalidGroupId,
    ],
    [
      'our fee-payer transaction paying out ALGO',
      hand(() => ({ feePayerTxn: { amount: 1n } })),
      Errors.ErrInvalidFeePayer,
      /amount must be 0/,
    ],
    [
      'our fee-payer transaction paying someone else',
      hand((s) => ({ feePayerTxn: { receiver: s } })),
      Errors.ErrInvalidFeePayer,
      /self-payment/,
    ],
    [
      'our fee-payer transaction closing our account',
      hand((s) => ({ feePayerTxn: { closeRemainderTo: s } })),
      Errors.ErrInvalidFeePayer,
      /closeRemainderTo/,
    ],
    [
      'our fee-payer transaction rekeying our account',
      hand((s) => ({ feePayerTxn: { rekeyTo: s } })),
      Errors.ErrInvalidFeePayer,
      /rekeyTo/,
    ],
    [
      'our fee-payer transaction with a fee above 5000 µAlgo per transaction',
      hand(() => ({ feePayerTxn: { fee: 10_001n } })),
      Errors.ErrFeeTooHigh,
    ],
    [
      'a group asking us to sign a second transaction',
      hand(() => ({ extraFeePayerTxn: true })),
      Errors.ErrInvalidFeePayer,
      /sign 2 transactions/,
    ],
    [
      'a group asking us to sign an asset transfer instead of our self-payment',
      hand(() => ({ feePayerSendsAsset: true })),
      Errors.ErrInvalidFeePayer,
      /Expected payment transaction/,
    ],
  ];
  for (const [label, make, reason, message] of cases) {
    it(`refuses ${label}`, async () => {
      const payment = await make();
      const submitted = algo.ledger.accepted.length;
      const fee = algo.ledger.algoOf(feePayerAddress());
      const verified = await facilitator.verify(payment, req);
      expect(verified).toMatchObject({ isValid: false, invalidReason: reason });
      if (message) expect(verified.invalidMessage).toMatch(message);
      const settled = await facilitator.settle(payment, req);
      expect(settled).toMatchObject({ success: false, errorReason: reason });
      expect(algo.ledger.accepted.length).toBe(submitted);
      expect(algo.ledger.algoOf(feePayerAddress())).toBe(fee);
    });
  }

  it('refuses an expired payment (its last valid round has passed)', async () => {
    const payment = await pay(4);
    algo.ledger.advance(20);
    const verified = await facilitator.verify(payment, req);
    expect(verified).toMatchObject({
      isValid: false,
      invalidReason: Errors.ErrSimulationFailed,
      invalidMessage: expect.stringMatching(/txn dead/),
    });
    expect((await facilitator.settle(payment, req)).success).toBe(false);
  });
});

describe('reconciling an Algorand settlement whose outcome was unknown', () => {
  const net = (): NetworkEntry => config.networks.find((n) => n.id === algo.network)!;
  const pending = (payload: PaymentPayload) => ({
    replayKey: `algorand-exact:${paymentTxid(payload)}`,
    payload,
    requirements: req,
    transaction: '',
  });
  const lookup = (payload: PaymentPayload, entry = net()) => algorandExactRail.lookup!(pending(payload), entry, config);

  it('reports a confirmed payment as settled with its txid', async () => {
    const payment = await pay(0);
    await facilitator.settle(payment, req);
    expect(await lookup(payment)).toEqual({ type: 'settled', transaction: paymentTxid(payment) });
  });

  it('finds a confirmed payment in its validity window once algod no longer lists it as pending', async () => {
    const payment = await pay(1);
    await facilitator.settle(payment, req);
    algo.ledger.advance(20);
    algo.ledger.pendingMemoryRounds = 5n;
    try {
      expect(await lookup(payment)).toEqual({ type: 'settled', transaction: paymentTxid(payment) });
    } finally {
      algo.ledger.pendingMemoryRounds = undefined;
    }
  });

  it('says pending while an unsubmitted payment could still land, and failed once its last valid round passed', async () => {
    const payment = await pay(2);
    expect(await lookup(payment)).toEqual({ type: 'pending' });
    algo.ledger.advance(20);
    expect(await lookup(payment)).toEqual({ type: 'failed', reason: 'transaction_expired_unsubmitted' });
  });

  it('reports a group submitted but never seen confirmed as settlement_pending, and settles it once algod confirms it', async () => {
    const payment = await pay(4);
    const txid = paymentTxid(payment);
    const payTo = algo.balance(algo.payTo);
    const submissions = algo.algod.requests.filter((r) => r === 'POST /v2/transactions').length;
    algo.ledger.holding = true;
    try {
      expect(await facilitator.settle(payment, req)).toMatchObject({
        success: false,
        errorReason: 'settlement_pending',
        transaction: txid,
      });
      expect(await lookup(payment)).toEqual({ type: 'pending' });
      expect(await facilitator.settle(payment, req)).toMatchObject({
        success: false,
        errorReason: 'settlement_pending',
        transaction: txid,
      });
      expect(algo.algod.requests.filter((r) => r === 'POST /v2/transactions')).toHaveLength(submissions + 1);
    } finally {
      algo.ledger.releaseHeld();
    }
    expect(await facilitator.settle(payment, req)).toMatchObject({ success: true, transaction: txid });
    expect(await lookup(payment)).toEqual({ type: 'settled', transaction: txid });
    expect(algo.balance(algo.payTo)).toBe(payTo + BigInt(req.amount));
  });

  it('says pending when algod cannot be reached', async () => {
    const payment = await pay(3);
    expect(await lookup(payment, { ...net(), rpcUrl: 'http://127.0.0.1:9' })).toEqual({ type: 'pending' });
  });
});

describe('Algorand network ids in the long (specification) and short (@x402/avm) forms', () => {
  const short = 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73k';

  it('treats both forms of one genesis hash as one chain, and mainnet and testnet as two', () => {
    expect(genesisMatches(short, GENESIS.mainnet)).toBe(true);
    expect(genesisMatches(algo.network, GENESIS.mainnet)).toBe(true);
    expect(genesisMatches(algo.network, GENESIS.testnet)).toBe(false);
    expect(genesisMatches(short, GENESIS.testnet)).toBe(false);
    expect([
      algorandNetworkKind(algo.network),
      algorandNetworkKind(short),
      algorandNetworkKind(`algorand:${GENESIS.testnet}`),
    ]).toEqual(['mainnet', 'mainnet', 'testnet']);
    expect(algorandNetworkKind('algorand:NotARealGenesisHashNotARealGenesis')).toBeUndefined();
  });

  it('verifies and settles a payment for a network entry configured with the short id', async () => {
    const entry = { ...JSON.parse(algo.env.NETWORKS_JSON!).networks[0], id: short };
    // A replaced table keeps a Base entry: token-report, smm-order and transfers-evm are paid there.
    const base = DEFAULT_NETWORKS.find((n) => n.id === BASE_MAINNET)!;
    const shortConfig = loadConfig({
      ...algo.env,
      NETWORKS_JSON: JSON.stringify({ networks: [entry, base], replace: true }),
      LOG_LEVEL: 'silent',
    });
    const local = new x402Facilitator();
    expect(algorandExactRail.registerInProcess(local, shortConfig.networks, shortConfig)).toEqual([short]);
    const shortReq = acceptsFor(shortConfig, annuity).find((a) => a.network === short)!;
    const payment = await officialAlgorandPaymentFor(algo.payers[5]!, shortReq, algo.algod.url);
    expect(await local.verify(payment, shortReq)).toMatchObject({ isValid: true });
    expect(await local.settle(payment, shortReq)).toMatchObject({ success: true, network: short });
  });

  it('registers no facilitator for an Algorand chain the official schemes do not know', () => {
    const other = {
      ...config.networks.find((n) => n.id === algo.network)!,
      id: 'algorand:NotARealGenesisHashNotARealGenesis',
    };
    expect(algorandExactRail.registerInProcess(new x402Facilitator(), [other], config)).toEqual([]);
  });
});
