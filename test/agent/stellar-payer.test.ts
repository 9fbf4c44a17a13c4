import { Keypair, Networks } from '@stellar/stellar-sdk';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StellarExactPayer, STELLAR_LEDGER_SECONDS } from '../../src/agent/stellar-payer.js';
import { checkAuthorization } from '../../src/payments/rails/stellar/authorization.js';
import { checkTransferCall, decodeStellarTransfer } from '../../src/payments/rails/stellar/checks.js';
import { maxExpirationLedger } from '../../src/payments/rails/stellar/network.js';
import { startStellarEnvironment, type StellarEnvironment } from '../support/chain/stellar.js';

let stellar: StellarEnvironment;
let requirements: PaymentRequirements;

beforeAll(async () => {
  stellar = await startStellarEnvironment({ payers: 1 });
  requirements = {
    scheme: 'exact',
    network: stellar.network as PaymentRequirements['network'],
    asset: stellar.usdc.contract,
    amount: '12345',
    payTo: stellar.payTo.publicKey(),
    maxTimeoutSeconds: 300,
    extra: { areFeesSponsored: true },
  };
}, 60_000);
afterAll(async () => {
  await stellar?.stop();
});

const payer = () => new StellarExactPayer(stellar.payers[0]!, () => stellar.rpc.url);
const rpcCalls = () => [...stellar.rpc.calls.values()].reduce((a, b) => a + b, 0);

describe('the Stellar exact payer', () => {
  it('signs a transfer the seller’s own checks accept: the call, the single payer entry, its expiration and signature', async () => {
    const { x402Version, payload } = await payer().createPaymentPayload(2, requirements);
    expect(x402Version).toBe(2);
    const decoded = decodeStellarTransfer(
      { x402Version, payload, accepted: requirements } as PaymentPayload,
      Networks.TESTNET,
    );
    if (!decoded.ok) throw new Error(decoded.message);
    const { transfer } = decoded;
    expect(transfer).toMatchObject({ from: stellar.payers[0]!.publicKey(), to: requirements.payTo, amount: 12345n });
    expect(checkTransferCall(transfer, requirements, new Set([stellar.facilitator.publicKey()]))).toBeUndefined();
    expect(transfer.tx.source).not.toBe(stellar.payers[0]!.publicKey());
    expect(transfer.tx.signatures).toEqual([]);
    const current = stellar.rpc.ledger.sequence;
    const auth = checkAuthorization(transfer, requirements, new Set(), current, Networks.TESTNET);
    expect(auth).toMatchObject({ ok: true, address: stellar.payers[0]!.publicKey() });
    if (!auth.ok) return;
    expect(auth.expirationLedger).toBe(current + 300 / STELLAR_LEDGER_SECONDS);
    expect(auth.expirationLedger).toBeLessThanOrEqual(maxExpirationLedger(current, 300));
  });

  it('binds the signature to the network: the same entry does not verify under another network passphrase', async () => {
    const { payload } = await payer().createPaymentPayload(2, requirements);
    const decoded = decodeStellarTransfer(
      { x402Version: 2, payload, accepted: requirements } as PaymentPayload,
      Networks.TESTNET,
    );
    if (!decoded.ok) throw new Error(decoded.message);
    const elsewhere = checkAuthorization(
      decoded.transfer,
      requirements,
      new Set(),
      stellar.rpc.ledger.sequence,
      Networks.PUBLIC,
    );
    expect(elsewhere).toMatchObject({ ok: false, reason: 'invalid_exact_stellar_payload_bad_payer_signature' });
  });

  it('refuses before asking the network: unsponsored fees, another scheme, a non-contract asset, pubnet without an RPC URL', async () => {
    const before = rpcCalls();
    const refusals: [Partial<PaymentRequirements>, RegExp][] = [
      [{ extra: {} }, /does not sponsor the fees/],
      [{ scheme: 'upto' }, /scheme upto/],
      [{ asset: Keypair.random().publicKey() }, /not a contract address/],
      [{ amount: '0' }, /not a positive integer/],
      [{ network: 'stellar:futurenet' as PaymentRequirements['network'] }, /unknown Stellar network/],
    ];
    for (const [change, message] of refusals)
      await expect(payer().createPaymentPayload(2, { ...requirements, ...change })).rejects.toThrow(message);
    const noRpc = new StellarExactPayer(stellar.payers[0]!, () => undefined);
    await expect(noRpc.createPaymentPayload(2, { ...requirements, network: 'stellar:pubnet' })).rejects.toThrow(
      /no Soroban RPC URL for stellar:pubnet/,
    );
    expect(rpcCalls()).toBe(before);
  });
});
