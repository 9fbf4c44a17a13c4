import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RoundLease } from '../../../src/payments/batch/round-lease.js';
import { createLogger } from '../../../src/shared/log.js';
import { SqliteStore } from '../../../src/store/dialects/sqlite/store.js';
import type { BatchUpkeep } from '../../../src/store/batch-upkeep.js';

/** A short lease, so that outliving it takes a second of the test, not the production half-minute. */
const LEASE_MS = 300;
const log = createLogger('silent');

let dir: string;
const stores: SqliteStore[] = [];
let upkeep: BatchUpkeep[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tollbooth-round-lease-'));
  // Two connections to one SQLite file: two instances sharing the store.
  for (let i = 0; i < 2; i++) stores.push(await SqliteStore.open(join(dir, 'tollbooth.db')));
  upkeep = stores.map((s) => s.batchUpkeep);
});

afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe('the claim round lease', () => {
  it('stays held by a live round that outlasts it, and is free for the next instance once given back', async () => {
    const first = new RoundLease(upkeep[0]!, 'round-a', log, LEASE_MS);
    expect(await first.take(Date.now())).toBe(true);
    await sleep(LEASE_MS * 3);
    const second = new RoundLease(upkeep[1]!, 'round-a', log, LEASE_MS);
    expect(await second.take(Date.now())).toBe(false);
    expect(first.lost).toBe(false);
    await first.release();
    expect(await second.take(Date.now())).toBe(true);
    await second.release();
  });

  it('lapses within its length when its holder stops renewing it (a process killed mid-round)', async () => {
    // A lease taken and never renewed, as a process killed right after taking it leaves it.
    expect(await upkeep[0]!.takeLease('round-b', Date.now() + LEASE_MS, Date.now())).toBe(true);
    const next = new RoundLease(upkeep[1]!, 'round-b', log, LEASE_MS);
    expect(await next.take(Date.now())).toBe(false);
    await sleep(LEASE_MS + 50);
    expect(await next.take(Date.now())).toBe(true);
    await next.release();
  });

  it('neither renews nor gives back a lease another instance took after it lapsed', async () => {
    const slow = new RoundLease(upkeep[0]!, 'round-c', log, LEASE_MS);
    const now = Date.now();
    expect(await slow.take(now)).toBe(true);
    // Another instance whose clock is past the lease takes it (as after a pause longer than the lease).
    const theirs = now + 10 * LEASE_MS;
    expect(await upkeep[1]!.takeLease('round-c', theirs, now + LEASE_MS)).toBe(true);
    await sleep(LEASE_MS);
    expect(slow.lost).toBe(true);
    await slow.release();
    // Still theirs: nobody can take it, and their own release frees it.
    expect(await upkeep[0]!.takeLease('round-c', now + 20 * LEASE_MS, now + 2 * LEASE_MS)).toBe(false);
    await upkeep[1]!.releaseLease('round-c', theirs);
    expect(await upkeep[0]!.takeLease('round-c', now + 20 * LEASE_MS, now + 2 * LEASE_MS)).toBe(true);
  });
});
