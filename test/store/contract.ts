import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type {
  IdempotencyClaim,
  NewSpend,
  PaymentClaim,
  PaymentLedger,
  PendingDetails,
  RateBuckets,
  ReceiptRecord,
  SpendLedger,
  Store,
  StoredResult,
  ToolState,
} from '../../src/store/store.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
/** Lets the clock move on, so records made one after the other get different timestamps (no assertion on time). */
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));
const secondsFromNow = (s: number) => new Date(Date.now() + s * 1000).toISOString();

const claim = (key: string, over: Partial<PaymentClaim> = {}): PaymentClaim => ({
  replayKey: key,
  tool: 'annuity',
  network: 'eip155:8453',
  payer: '0xPayer',
  amount: '1000',
  transport: 'http',
  ...over,
});
const receipt = (key: string, over: Partial<ReceiptRecord> = {}): ReceiptRecord => ({
  replayKey: key,
  tool: 'annuity',
  network: 'eip155:8453',
  payer: '0xPayer',
  amount: '1000',
  transaction: `0xtx-${key}`,
  status: 'settled',
  transport: 'mcp',
  protocol: 'x402',
  createdAt: new Date().toISOString(),
  ...over,
});
const details = (over: Partial<PendingDetails> = {}): PendingDetails => ({
  transaction: '0xpending',
  payload: {
    x402Version: 2,
    payload: { signature: '0xsig', authorization: { nonce: '0x01', value: '1000' } },
    extensions: { list: [1, 'two', null] },
  },
  requirements: { scheme: 'exact', network: 'eip155:8453', amount: '1000', extra: { name: 'USD Coin', version: '2' } },
  requestHash: 'sha256:request',
  output: { presentValue: 772.17, rows: [{ n: 1 }, { n: 2 }], note: null },
  ...over,
});
const idem = (id: string, over: Partial<IdempotencyClaim> = {}): IdempotencyClaim => ({
  id,
  tool: 'annuity',
  requestHash: 'sha256:request-a',
  replayKey: 'payment-a',
  expiresAt: secondsFromNow(3600),
  ...over,
});
const stored: StoredResult = {
  output: { presentValue: 772.17, futureValue: 1257.78, type: 'ordinary', list: [1, 2, 3] },
  receipt: { success: true, transaction: '0xsettled', network: 'eip155:8453', payer: '0xPayer', amount: '1000' },
};
const spend = (over: Partial<NewSpend> = {}): NewSpend => ({
  id: `spend_${randomUUID()}`,
  day: '2026-11-21',
  tool: 'annuity',
  resource: 'https://tollbooth.example/api/annuity',
  requestHash: 'sha256:request-a',
  network: 'eip155:8453',
  asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  amount: '1000',
  usdMicros: 1000,
  ...over,
});
/** An idempotency id of the allowed shape (16–128 of [A-Za-z0-9_-]). */
const newId = () => `idem_${randomUUID().replace(/-/g, '')}`;

/**
 * The behaviour every `Store` implementation must have. `open` returns a new, empty store each time it is
 * called (the suite closes each one after its test); `cleanup` runs once after all tests.
 */
export function describeStoreContract(label: string, open: () => Promise<Store>, cleanup?: () => Promise<void>): void {
  describe(`the ${label} store (shared contract)`, () => {
    let store: Store;
    let ledger: PaymentLedger;
    let toolState: ToolState;
    let spends: SpendLedger;
    let buckets: RateBuckets;
    beforeEach(async () => {
      store = await open();
      ({ ledger, toolState, spends, buckets } = store);
    });
    afterEach(async () => {
      await store.close();
    });
    if (cleanup) afterAll(cleanup);

    it('answers a ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    it('takes a write probe and leaves no row of it behind', async () => {
      await expect(store.probeWrite()).resolves.toBeUndefined();
      await expect(store.probeWrite()).resolves.toBeUndefined();
      // The probe's row has a bucket time of 0: a purge up to 0 removes nothing but a left-over probe row.
      expect(await buckets.purgeTokenBuckets(0)).toBe(0);
    });

    describe('replay guard', () => {
      it('gives a payment claim to exactly one of 50 concurrent claimers; the others see it in flight', async () => {
        const results = await Promise.all(Array.from({ length: 50 }, () => ledger.claimPayment(claim('race'))));
        expect(results.filter((r) => r.type === 'claimed')).toHaveLength(1);
        expect(results.filter((r) => r.type === 'in_flight')).toHaveLength(49);
      });

      it('lets a released claim be claimed again (the authorization stays usable)', async () => {
        expect(await ledger.claimPayment(claim('k'))).toEqual({ type: 'claimed' });
        expect(await ledger.claimPayment(claim('k'))).toEqual({ type: 'in_flight' });
        await ledger.releasePayment('k');
        expect(await ledger.claimPayment(claim('k'))).toEqual({ type: 'claimed' });
      });

      it('reports a completed payment as spent with its transaction, and never releases it', async () => {
        await ledger.claimPayment(claim('k'));
        await ledger.completePayment(receipt('k', { transaction: '0xspent' }));
        await ledger.releasePayment('k');
        expect(await ledger.claimPayment(claim('k'))).toEqual({ type: 'spent', transaction: '0xspent' });
      });

      it('stores the settled receipt together with marking the payment spent', async () => {
        await ledger.claimPayment(claim('k'));
        const r = receipt('k', { transaction: '0xspent', amount: '900' });
        await ledger.completePayment(r);
        expect(await ledger.listReceipts()).toEqual([r]);
      });

      it('keeps a pending payment with all its details and answers further claims with them', async () => {
        await ledger.claimPayment(claim('k', { transport: 'mcp', amount: '2500', payer: '0xSomeone' }));
        const d = details();
        await ledger.markPaymentPending('k', d);
        const result = await ledger.claimPayment(claim('k'));
        expect(result.type).toBe('pending');
        if (result.type !== 'pending') return;
        expect(result.pending).toMatchObject({
          replayKey: 'k',
          tool: 'annuity',
          network: 'eip155:8453',
          payer: '0xSomeone',
          amount: '2500',
          transport: 'mcp',
          ...d,
        });
        expect(result.pending.createdAt).toMatch(ISO);
        expect(result.pending.updatedAt).toMatch(ISO);
        expect(await ledger.listPending()).toEqual([result.pending]);
      });

      it('keeps a pending payment unusable: release does not free it', async () => {
        await ledger.claimPayment(claim('k'));
        await ledger.markPaymentPending('k', details());
        await ledger.releasePayment('k');
        expect((await ledger.claimPayment(claim('k'))).type).toBe('pending');
        expect(await ledger.listPending()).toHaveLength(1);
      });

      it('completes a pending payment: spent with its transaction and undelivered output, no longer pending, receipt stored', async () => {
        await ledger.claimPayment(claim('k'));
        const d = details({ transaction: '0xlate' });
        await ledger.markPaymentPending('k', d);
        const r = receipt('k', { transaction: '0xlate' });
        await ledger.completePayment(r);
        expect(await ledger.claimPayment(claim('k'))).toEqual({
          type: 'spent',
          transaction: '0xlate',
          undelivered: { requestHash: d.requestHash, output: d.output },
        });
        expect(await ledger.listPending()).toEqual([]);
        expect(await ledger.listReceipts()).toEqual([r]);
      });

      it('records one receipt when two reconcilers complete the same pending payment at once', async () => {
        await ledger.claimPayment(claim('k'));
        await ledger.markPaymentPending('k', details());
        await Promise.all([ledger.completePayment(receipt('k')), ledger.completePayment(receipt('k'))]);
        expect(await ledger.listReceipts()).toHaveLength(1);
      });

      it('records no failed receipt for a pending payment that was completed meanwhile, and keeps it spent', async () => {
        await ledger.claimPayment(claim('k'));
        await ledger.markPaymentPending('k', details());
        await ledger.completePayment(receipt('k', { transaction: '0xdone' }));
        await ledger.releasePending(
          receipt('k', { status: 'failed', transaction: '', errorReason: 'settlement_failed' }),
        );
        expect((await ledger.listReceipts()).map((r) => r.status)).toEqual(['settled']);
        expect(await ledger.claimPayment(claim('k'))).toMatchObject({ type: 'spent', transaction: '0xdone' });
      });

      it('ends a pending payment that never settled: records the failed receipt and releases the claim', async () => {
        await ledger.claimPayment(claim('k'));
        await ledger.markPaymentPending('k', details({ transaction: '' }));
        const failed = receipt('k', { status: 'failed', transaction: '', errorReason: 'settlement_failed' });
        await ledger.releasePending(failed);
        expect(await ledger.listPending()).toEqual([]);
        expect(await ledger.listReceipts()).toEqual([failed]);
        expect(await ledger.claimPayment(claim('k'))).toEqual({ type: 'claimed' });
      });

      it('lists pending settlements oldest first', async () => {
        for (const key of ['first', 'second', 'third']) {
          await ledger.claimPayment(claim(key));
          await ledger.markPaymentPending(key, details({ transaction: `0x${key}` }));
          await tick();
        }
        await ledger.claimPayment(claim('only-claimed'));
        expect((await ledger.listPending()).map((p) => [p.replayKey, p.transaction])).toEqual([
          ['first', '0xfirst'],
          ['second', '0xsecond'],
          ['third', '0xthird'],
        ]);
      });
    });

    describe('receipts', () => {
      it('stores a failed receipt with its reason and every field as given', async () => {
        const failed = receipt('f', {
          status: 'failed',
          transaction: '',
          errorReason: 'insufficient_funds',
          transport: 'http',
          payer: '0xP',
          network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
        });
        await ledger.recordReceipt(failed);
        expect(await ledger.listReceipts()).toEqual([failed]);
      });

      it('records the protocol of each payment: x402, or MPP', async () => {
        await ledger.claimPayment(claim('via-mpp', { protocol: 'mpp' }));
        await ledger.completePayment(receipt('via-mpp', { protocol: 'mpp' }));
        await ledger.recordReceipt(
          receipt('via-x402', { status: 'failed', transaction: '', errorReason: 'insufficient_funds' }),
        );
        const listed = await ledger.listReceipts();
        expect(Object.fromEntries(listed.map((r) => [r.replayKey, r.protocol]))).toEqual({
          'via-mpp': 'mpp',
          'via-x402': 'x402',
        });
      });

      it('reads a receipt written without a protocol as x402 (what every payment was before MPP)', async () => {
        const { protocol: _protocol, ...legacy } = receipt('legacy');
        await ledger.recordReceipt(legacy);
        expect((await ledger.listReceipts())[0]).toMatchObject({ replayKey: 'legacy', protocol: 'x402' });
      });

      it('keeps the protocol of a pending claim, so its reconciled receipt records it', async () => {
        await ledger.claimPayment(claim('pending-mpp', { protocol: 'mpp' }));
        await ledger.markPaymentPending('pending-mpp', details());
        expect((await ledger.listPending()).find((p) => p.replayKey === 'pending-mpp')).toMatchObject({
          protocol: 'mpp',
        });
      });

      it('lists receipts most recent first and honours the limit', async () => {
        const base = Date.now() - 60_000;
        const all = [1, 2, 3, 4].map((i) => receipt(`r${i}`, { createdAt: new Date(base + i * 1000).toISOString() }));
        for (const r of all) await ledger.recordReceipt(r);
        expect((await ledger.listReceipts()).map((r) => r.replayKey)).toEqual(['r4', 'r3', 'r2', 'r1']);
        expect((await ledger.listReceipts({ limit: 2 })).map((r) => r.replayKey)).toEqual(['r4', 'r3']);
      });

      it('lists only the receipts created since a time, of the kinds asked for', async () => {
        const base = Date.now() - 60_000;
        const at = (i: number) => new Date(base + i * 1000).toISOString();
        const kinds = ['claim', 'voucher', 'refund', 'claim'] as const;
        for (const [i, kind] of kinds.entries())
          await ledger.recordReceipt(receipt(`k${i}`, { kind, createdAt: at(i) }));
        const listed = await ledger.listReceipts({ since: at(1), kinds: ['claim', 'refund'] });
        expect(listed.map((r) => r.replayKey)).toEqual(['k3', 'k2']);
        expect((await ledger.listReceipts({ kinds: [] })).length).toBe(0);
      });
    });

    describe('faucet drips', () => {
      it('grants at most the daily limit to one subject, even to 10 concurrent callers', async () => {
        const results = await Promise.all(
          Array.from({ length: 10 }, () => toolState.claimDrip('base-sepolia:0xabc', '2026-11-21', 2)),
        );
        expect(
          results
            .filter((r) => r.type === 'granted')
            .map((r) => r.count)
            .sort(),
        ).toEqual([1, 2]);
        expect(results.filter((r) => r.type === 'limit_reached')).toEqual(
          Array.from({ length: 8 }, () => ({ type: 'limit_reached', count: 2 })),
        );
      });

      it('counts each subject and day on its own', async () => {
        await toolState.claimDrip('base-sepolia:0xabc', '2026-11-21', 1);
        expect(await toolState.claimDrip('base-sepolia:0xabc', '2026-11-22', 1)).toEqual({ type: 'granted', count: 1 });
        expect(await toolState.claimDrip('solana-devnet:Abc', '2026-11-21', 1)).toEqual({ type: 'granted', count: 1 });
      });

      it('takes back a released drip, so it can be granted again', async () => {
        await toolState.claimDrip('s', '2026-11-21', 1);
        expect(await toolState.claimDrip('s', '2026-11-21', 1)).toEqual({ type: 'limit_reached', count: 1 });
        await toolState.releaseDrip('s', '2026-11-21');
        expect(await toolState.claimDrip('s', '2026-11-21', 1)).toEqual({ type: 'granted', count: 1 });
      });

      it('grants nothing under a limit of 0', async () => {
        expect(await toolState.claimDrip('s', '2026-11-21', 0)).toEqual({ type: 'limit_reached', count: 0 });
      });
    });

    describe('orders', () => {
      const order = {
        orderId: '23501',
        serviceId: 1,
        link: 'https://example.com/p',
        quantity: 100,
        chargeUsd: 3.25,
        status: 'ordered',
        payer: '0xabc',
        replayKey: 'k',
        createdAt: '2026-11-21T06:00:00.000Z',
        updatedAt: '2026-11-21T06:00:00.000Z',
      };

      it('keeps a placed order as given and answers undefined for an unknown id', async () => {
        await toolState.saveOrder(order);
        expect(await toolState.getOrder('23501')).toEqual(order);
        expect(await toolState.getOrder('nope')).toBeUndefined();
      });

      it('updates the status of an order saved again', async () => {
        await toolState.saveOrder(order);
        await toolState.saveOrder({ ...order, status: 'completed', updatedAt: '2026-11-21T07:00:00.000Z' });
        expect(await toolState.getOrder('23501')).toEqual({
          ...order,
          status: 'completed',
          updatedAt: '2026-11-21T07:00:00.000Z',
        });
      });
    });

    describe('agent spending', () => {
      it('reserves payments while the day stays within its limit, and refuses the one that would exceed it', async () => {
        expect(await spends.claimSpend(spend({ usdMicros: 3000 }), 5000)).toEqual({
          type: 'reserved',
          spentMicros: 3000,
        });
        expect(await spends.claimSpend(spend({ usdMicros: 2000 }), 5000)).toEqual({
          type: 'reserved',
          spentMicros: 5000,
        });
        expect(await spends.claimSpend(spend({ usdMicros: 1 }), 5000)).toEqual({
          type: 'over_budget',
          spentMicros: 5000,
        });
        expect(await spends.spentOn('2026-11-21')).toBe(5000);
      });

      it('lets exactly the affordable 4 of 10 concurrent reservations through', async () => {
        const results = await Promise.all(
          Array.from({ length: 10 }, () => spends.claimSpend(spend({ usdMicros: 2500 }), 10_000)),
        );
        expect(results.filter((r) => r.type === 'reserved')).toHaveLength(4);
        expect(results.filter((r) => r.type === 'over_budget')).toHaveLength(6);
        expect(await spends.spentOn('2026-11-21')).toBe(10_000);
      });

      it('counts settled and pending payments, and gives back what was cancelled or failed', async () => {
        const [a, b, c, d] = [
          spend({ usdMicros: 1000 }),
          spend({ usdMicros: 2000 }),
          spend({ usdMicros: 4000 }),
          spend({ usdMicros: 8000 }),
        ];
        for (const s of [a, b, c, d]) await spends.claimSpend(s, 1_000_000);
        await spends.completeSpend(a.id, { status: 'settled', transaction: '0xa', payer: '0xPayer' });
        await spends.completeSpend(b.id, {
          status: 'pending',
          payload: { x402Version: 2, payload: { signature: '0xb' } },
          note: 'settlement_pending',
        });
        await spends.completeSpend(c.id, { status: 'failed', note: 'settlement failed: insufficient_funds' });
        await spends.releaseSpend(d.id, 'the server refused the payment before running the tool');
        expect(await spends.spentOn('2026-11-21')).toBe(3000);
        expect(await spends.spentOn('2026-11-22')).toBe(0);
      });

      it('counts each day on its own', async () => {
        await spends.claimSpend(spend({ usdMicros: 5000 }), 5000);
        expect(await spends.claimSpend(spend({ day: '2026-11-22', usdMicros: 5000 }), 5000)).toEqual({
          type: 'reserved',
          spentMicros: 5000,
        });
      });

      it('keeps every field of a settled payment (its protocol too) and lists payments most recent first, filtered by status', async () => {
        const first = spend({ paymentId: 'pay_0123456789abcdef', protocol: 'mpp' });
        await spends.claimSpend(first, 1_000_000);
        await spends.completeSpend(first.id, { status: 'settled', transaction: '0xsettled', payer: '0xPayer' });
        await tick();
        const second = spend({ tool: 'geo-distance', usdMicros: 2000, amount: '2000' });
        await spends.claimSpend(second, 1_000_000);
        const listed = await spends.listSpends();
        expect(listed.map((s) => s.id)).toEqual([second.id, first.id]);
        const { createdAt, updatedAt, ...rest } = listed[1]!;
        expect(rest).toEqual({ ...first, status: 'settled', transaction: '0xsettled', payer: '0xPayer' });
        expect(createdAt).toMatch(ISO);
        expect(updatedAt).toMatch(ISO);
        // A payment reserved without a protocol was made with x402.
        expect(listed[0]).toMatchObject({
          status: 'reserved',
          tool: 'geo-distance',
          usdMicros: 2000,
          protocol: 'x402',
        });
        expect((await spends.listSpends({ statuses: ['settled'] })).map((s) => s.id)).toEqual([first.id]);
        expect(await spends.listSpends({ limit: 1 })).toHaveLength(1);
      });

      it('finds the pending payment of a request with the payment to retry, and forgets it once it ended', async () => {
        const s = spend({ requestHash: 'sha256:lost' });
        await spends.claimSpend(s, 1_000_000);
        expect(await spends.pendingSpend('sha256:lost')).toBeUndefined();
        const payload = {
          x402Version: 2,
          accepted: { network: 'eip155:8453' },
          payload: { signature: '0xsig', list: [1, 'two'] },
        };
        await spends.completeSpend(s.id, { status: 'pending', payload, note: 'no answer' });
        expect(await spends.pendingSpend('sha256:lost')).toMatchObject({
          id: s.id,
          status: 'pending',
          payload,
          note: 'no answer',
        });
        await spends.completeSpend(s.id, { status: 'settled', transaction: '0xlate' });
        expect(await spends.pendingSpend('sha256:lost')).toBeUndefined();
        expect((await spends.listSpends())[0]).toMatchObject({ status: 'settled', transaction: '0xlate' });
        expect((await spends.listSpends())[0]?.payload).toBeUndefined();
      });

      it('keeps the signed payment of a settled payment for its receipt re-checks until the chain confirms it or the check is final', async () => {
        const [a, b, c, d] = [spend(), spend(), spend(), spend()];
        for (const s of [a, b, c, d]) await spends.claimSpend(s, 1_000_000);
        const payload = { x402Version: 2, payload: { authorization: { from: '0xPayer', nonce: '0x01' } } };
        await spends.completeSpend(a.id, { status: 'settled', transaction: '0xa', payload });
        await tick();
        await spends.completeSpend(b.id, { status: 'settled', transaction: '0xb', payload });
        await spends.completeSpend(c.id, { status: 'settled', transaction: '0xc' });
        await spends.completeSpend(d.id, { status: 'pending', payload });
        const toRecheck = async () => (await spends.spendsToRecheck(10)).map((s) => s.id);
        expect(await toRecheck()).toEqual([a.id, b.id]);
        expect((await spends.spendsToRecheck(1)).map((s) => [s.id, s.payload])).toEqual([[a.id, payload]]);
        await tick();
        await spends.setChainCheck(a.id, 'not_seen');
        // The longest unchanged first: a, just checked again, comes after b.
        expect(await toRecheck()).toEqual([b.id, a.id]);
        await spends.setChainCheck(b.id, 'confirmed');
        expect(await toRecheck()).toEqual([a.id]);
        // A check that read the chain before the settlement landed never turns a confirmed payment back.
        await spends.setChainCheck(b.id, 'not_seen');
        await spends.setChainCheck(a.id, 'not_seen', true);
        expect(await toRecheck()).toEqual([]);
        const byId = new Map((await spends.listSpends()).map((s) => [s.id, s]));
        expect(byId.get(a.id)).toMatchObject({ status: 'settled', chainCheck: 'not_seen' });
        expect(byId.get(a.id)?.payload).toBeUndefined();
        expect(byId.get(b.id)).toMatchObject({ status: 'settled', chainCheck: 'confirmed' });
        expect(byId.get(b.id)?.payload).toBeUndefined();
        expect(await spends.spentOn(a.day)).toBe(4 * a.usdMicros);
      });

      it('never reopens a payment that ended: a late cancel or finish leaves it as it was', async () => {
        const s = spend();
        await spends.claimSpend(s, 1_000_000);
        await spends.completeSpend(s.id, { status: 'settled', transaction: '0xdone' });
        await spends.releaseSpend(s.id, 'too late');
        await spends.completeSpend(s.id, { status: 'failed', note: 'too late' });
        expect((await spends.listSpends())[0]).toMatchObject({ status: 'settled', transaction: '0xdone' });
        expect(await spends.spentOn(s.day)).toBe(s.usdMicros);
      });
    });

    describe('idempotency records', () => {
      it('answers new for a first id, then in flight for the same request and payment', async () => {
        const id = newId();
        expect(await ledger.claimIdempotency(idem(id))).toEqual({ type: 'new' });
        expect(await ledger.claimIdempotency(idem(id))).toEqual({ type: 'in_flight' });
      });

      it('answers done with the stored output and receipt once the call finished', async () => {
        const id = newId();
        await ledger.claimIdempotency(idem(id));
        await ledger.completeIdempotency(id, stored);
        expect(await ledger.claimIdempotency(idem(id))).toEqual({ type: 'done', result: stored });
      });

      it('refuses the same id for a different request, in flight or done', async () => {
        const id = newId();
        await ledger.claimIdempotency(idem(id));
        expect(await ledger.claimIdempotency(idem(id, { requestHash: 'sha256:other' }))).toEqual({
          type: 'conflict',
          reason: 'different_request',
        });
        await ledger.completeIdempotency(id, stored);
        expect(await ledger.claimIdempotency(idem(id, { requestHash: 'sha256:other' }))).toEqual({
          type: 'conflict',
          reason: 'different_request',
        });
      });

      it('refuses the same id for another tool as a different request', async () => {
        const id = newId();
        await ledger.claimIdempotency(idem(id));
        expect(await ledger.claimIdempotency(idem(id, { tool: 'geo-distance' }))).toEqual({
          type: 'conflict',
          reason: 'different_request',
        });
      });

      it('refuses the same id and request with a different payment, in flight or done', async () => {
        const id = newId();
        await ledger.claimIdempotency(idem(id));
        expect(await ledger.claimIdempotency(idem(id, { replayKey: 'payment-b' }))).toEqual({
          type: 'conflict',
          reason: 'different_payment',
        });
        await ledger.completeIdempotency(id, stored);
        expect(await ledger.claimIdempotency(idem(id, { replayKey: 'payment-b' }))).toEqual({
          type: 'conflict',
          reason: 'different_payment',
        });
      });

      it('treats an expired record as absent: the id is new again, even for another request', async () => {
        const id = newId();
        await ledger.claimIdempotency(idem(id, { expiresAt: secondsFromNow(-1) }));
        await ledger.completeIdempotency(id, stored);
        expect(
          await ledger.claimIdempotency(idem(id, { requestHash: 'sha256:other', replayKey: 'payment-b' })),
        ).toEqual({ type: 'new' });
        expect(
          await ledger.claimIdempotency(idem(id, { requestHash: 'sha256:other', replayKey: 'payment-b' })),
        ).toEqual({ type: 'in_flight' });
      });

      it('forgets an abandoned in-flight id so the client may retry with it', async () => {
        const id = newId();
        await ledger.claimIdempotency(idem(id));
        await ledger.releaseIdempotency(id);
        expect(await ledger.claimIdempotency(idem(id))).toEqual({ type: 'new' });
      });

      it('keeps a finished id when asked to abandon it', async () => {
        const id = newId();
        await ledger.claimIdempotency(idem(id));
        await ledger.completeIdempotency(id, stored);
        await ledger.releaseIdempotency(id);
        expect(await ledger.claimIdempotency(idem(id))).toEqual({ type: 'done', result: stored });
      });

      it('purges only records that expired before the given time and says how many', async () => {
        const [old1, old2, live] = [newId(), newId(), newId()];
        await ledger.claimIdempotency(idem(old1, { expiresAt: secondsFromNow(-120) }));
        await ledger.claimIdempotency(idem(old2, { expiresAt: secondsFromNow(-60) }));
        await ledger.completeIdempotency(old2, stored);
        await ledger.claimIdempotency(idem(live));
        expect(await ledger.purgeIdempotency(new Date().toISOString())).toBe(2);
        expect(await ledger.purgeIdempotency(new Date().toISOString())).toBe(0);
        expect(await ledger.claimIdempotency(idem(live))).toEqual({ type: 'in_flight' });
      });

      it('gives exactly one of 20 concurrent begins with the same id a new record', async () => {
        const id = newId();
        const results = await Promise.all(Array.from({ length: 20 }, () => ledger.claimIdempotency(idem(id))));
        expect(results.filter((r) => r.type === 'new')).toHaveLength(1);
        expect(results.filter((r) => r.type === 'in_flight')).toHaveLength(19);
      });
    });

    describe('rate-limit buckets', () => {
      // The caller's clock is a parameter: these tests move it by hand and never wait.
      const T = 1_700_000_000_000;
      const bucket = (
        key: string,
        now: number,
        over: { capacity?: number; refillPerSecond?: number; cost?: number } = {},
      ) => buckets.claimTokens({ key, now, capacity: 3, refillPerSecond: 1, cost: 1, ...over });

      it('gives a new bucket its capacity, then limits with the time until the next token', async () => {
        expect(await bucket('ip:a', T)).toEqual({ type: 'taken', remaining: 2 });
        expect(await bucket('ip:a', T)).toEqual({ type: 'taken', remaining: 1 });
        expect(await bucket('ip:a', T)).toEqual({ type: 'taken', remaining: 0 });
        expect(await bucket('ip:a', T)).toEqual({ type: 'limited', retryAfterMs: 1000 });
        expect(await bucket('ip:a', T + 400)).toEqual({ type: 'limited', retryAfterMs: 600 });
      });

      it('refills at its rate, one token per interval, and never beyond its capacity', async () => {
        for (let i = 0; i < 3; i++) await bucket('ip:b', T);
        expect(await bucket('ip:b', T + 1000)).toEqual({ type: 'taken', remaining: 0 });
        expect(await bucket('ip:b', T + 1000)).toEqual({ type: 'limited', retryAfterMs: 1000 });
        expect(await bucket('ip:b', T + 3_600_000)).toEqual({ type: 'taken', remaining: 2 });
      });

      it('takes from several buckets at once, each as on its own, and says which one is limited', async () => {
        for (let i = 0; i < 3; i++) await bucket('payer:each', T);
        const ask = (key: string) => ({ key, now: T, capacity: 3, refillPerSecond: 1, cost: 1 });
        expect(await buckets.claimTokensFromEach([ask('payer:each'), ask('tool:each')])).toEqual([
          { type: 'limited', retryAfterMs: 1000 },
          { type: 'taken', remaining: 2 },
        ]);
        expect(await buckets.claimTokensFromEach([])).toEqual([]);
      });

      it('keeps each key on its own', async () => {
        for (let i = 0; i < 3; i++) await bucket('payer:x', T);
        expect((await bucket('payer:x', T)).type).toBe('limited');
        expect(await bucket('payer:y', T)).toEqual({ type: 'taken', remaining: 2 });
      });

      it('takes several tokens at once, and refuses a cost the bucket cannot hold yet', async () => {
        expect(await bucket('tool:c', T, { cost: 2 })).toEqual({ type: 'taken', remaining: 1 });
        expect(await bucket('tool:c', T, { cost: 2 })).toEqual({ type: 'limited', retryAfterMs: 1000 });
        expect(await bucket('tool:c', T, { cost: 1 })).toEqual({ type: 'taken', remaining: 0 });
      });

      it('never gives more than the capacity to 30 concurrent takers', async () => {
        const results = await Promise.all(
          Array.from({ length: 30 }, () => bucket('ip:race', T, { capacity: 10, refillPerSecond: 0.001 })),
        );
        expect(results.filter((r) => r.type === 'taken')).toHaveLength(10);
        expect(results.filter((r) => r.type === 'limited')).toHaveLength(20);
      });

      it('purges only the buckets that are full again, and keeps the state of the others', async () => {
        await bucket('ip:full-soon', T, { capacity: 2 });
        await bucket('ip:busy', T + 1500, { capacity: 2 });
        expect(await buckets.purgeTokenBuckets(T + 2000)).toBe(1);
        expect(await bucket('ip:busy', T + 2000, { capacity: 2 })).toEqual({ type: 'taken', remaining: 0 });
        expect((await bucket('ip:busy', T + 2000, { capacity: 2 })).type).toBe('limited');
        expect(await bucket('ip:full-soon', T + 2000, { capacity: 2 })).toEqual({ type: 'taken', remaining: 1 });
      });
    });

    describe('claims abandoned by a stopped process', () => {
      it('lists claimed payments last touched before a time, with the details they were claimed with', async () => {
        const details = {
          payload: { x402Version: 2, payload: { n: 1 } },
          requirements: { network: 'eip155:8453' },
          requestHash: 'sha256:r',
        };
        await ledger.claimPayment({ ...claim('stale-1'), details });
        await ledger.claimPayment(claim('stale-2'));
        await ledger.claimPayment({ ...claim('pending-1'), details });
        await ledger.markPaymentPending('pending-1', { ...details, transaction: '', output: { a: 1 } });
        const later = secondsFromNow(60);
        const stale = await ledger.listStaleClaims(later);
        expect(stale.map((c) => c.replayKey).sort()).toEqual(['stale-1', 'stale-2']);
        expect(stale.find((c) => c.replayKey === 'stale-1')).toMatchObject({
          tool: 'annuity',
          payer: '0xPayer',
          ...details,
        });
        expect(stale.find((c) => c.replayKey === 'stale-1')?.output).toBeUndefined();
        expect(await ledger.listStaleClaims(secondsFromNow(-60))).toEqual([]);
      });

      it('reports a claimed payment completed later as spent without an undelivered output', async () => {
        await ledger.claimPayment({
          ...claim('stale-3'),
          details: { payload: {}, requirements: {}, requestHash: 'h' },
        });
        await ledger.completePayment(receipt('stale-3'));
        expect(await ledger.claimPayment(claim('stale-3'))).toEqual({ type: 'spent', transaction: '0xtx-stale-3' });
        expect(await ledger.listStaleClaims(secondsFromNow(60))).toEqual([]);
      });
    });
  });
}
