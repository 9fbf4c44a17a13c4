import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { deferredStore } from '../../src/store/deferred.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';

const dir = mkdtempSync(join(tmpdir(), 'tollbooth-deferred-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const quiet = { info() {}, warn() {}, error() {} };
let n = 0;

/** A deferred SQLite store in a directory of its own, counting how often it was opened. */
function counted(dataDir = join(dir, `s${++n}`)) {
  let opens = 0;
  const deferred = deferredStore(() => {
    opens++;
    return openStore({ dataDir }, quiet);
  });
  return { deferred, opens: () => opens };
}

describe('a store opened later', () => {
  it('opens nothing until asked', async () => {
    const { deferred, opens } = counted();
    await new Promise((resolve) => setImmediate(resolve));
    expect(opens()).toBe(0);
    await deferred.store.close();
    expect(opens()).toBe(0);
  });

  it('answers a call made before it is open once it is, from the real store, and opens once', async () => {
    const { deferred, opens } = counted();
    const first = deferred.store.toolState.claimDrip('eip155:84532:0xabc', '2026-11-28', 1);
    const second = deferred.store.toolState.claimDrip('eip155:84532:0xabc', '2026-11-28', 1);
    const [a, b] = await Promise.all([first, second]);
    // One drip a day: the store, not the wrapper, decided (one of the two was refused).
    expect([a.type, b.type].sort()).toEqual(['granted', 'limit_reached']);
    expect(await deferred.opened).toBe(await deferred.open());
    expect(opens()).toBe(1);
    await deferred.store.ping();
    await deferred.store.close();
  });

  it('is opened by open(), and its parts then call the store directly', async () => {
    const { deferred, opens } = counted();
    const store: Store = await deferred.open();
    await store.toolState.saveOrder(order('o-1'));
    expect(await deferred.store.toolState.getOrder('o-1')).toMatchObject({ orderId: 'o-1', status: 'placed' });
    expect(opens()).toBe(1);
    await deferred.store.close();
  });

  it('fails the calls waiting for it, and open(), when it cannot be opened', async () => {
    const dataDir = join(dir, 'blocked');
    mkdirSync(join(dataDir, 'tollbooth.db'), { recursive: true }); // a directory where the file should be
    const { deferred } = counted(dataDir);
    const waiting = deferred.store.ledger.listPending();
    await expect(deferred.open()).rejects.toThrow();
    await expect(waiting).rejects.toThrow();
    await expect(deferred.opened).rejects.toThrow();
    await deferred.store.close();
  });

  it('is not mistaken for a promise when a part is awaited', async () => {
    const { deferred } = counted();
    const ledger = await deferred.store.ledger;
    expect(typeof ledger.claimPayment).toBe('function');
    await deferred.store.close();
  });
});

function order(orderId: string) {
  const at = new Date().toISOString();
  return {
    orderId,
    serviceId: 1,
    link: 'https://example.com/p/1',
    quantity: 100,
    chargeUsd: 0.5,
    status: 'placed',
    payer: '0x0000000000000000000000000000000000000001',
    replayKey: `r-${orderId}`,
    createdAt: at,
    updatedAt: at,
  };
}
