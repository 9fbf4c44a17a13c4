import { afterEach, describe, expect, it } from 'vitest';
import { searchServices, type DiscoverDeps } from '../../src/agent/discover.js';
import { loadAgentConfig } from '../../src/agent/settings.js';
import { loadWallets } from '../../src/agent/wallets.js';
import { startBazaar, type Bazaar } from '../support/bazaar.js';

/** A discovery item of a service nobody needs to pay here. */
const item = (resource: string, description: string) => ({
  resource,
  type: 'http',
  x402Version: 2,
  accepts: [],
  lastUpdated: new Date(0).toISOString(),
  metadata: { description },
});
const others = Array.from({ length: 4 }, (_, i) => item(`https://other.example/${i}`, `Something else ${i}`));
const ledger = item('https://ledger.example/balance', 'A ledger balance');

/** The defaults of discover.ts, written out: 20 results, 10 s, 20 pages, 5 MB over all pages, 1 MB per document. */
const DEFAULTS: NonNullable<Parameters<typeof searchServices>[3]> = {
  maxItems: 20,
  timeoutMs: 10_000,
  maxPages: 20,
  maxIndexBytes: 5_000_000,
  maxBytes: 1_000_000,
};

const running: Bazaar[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((b) => b.close()));
});

async function depsOf(): Promise<DiscoverDeps> {
  const { networks } = loadAgentConfig({});
  return { networks, wallets: await loadWallets({}, networks) };
}

async function bazaarOf(...args: Parameters<typeof startBazaar>): Promise<Bazaar> {
  const bazaar = await startBazaar(...args);
  running.push(bazaar);
  return bazaar;
}

describe('searching a discovery index that answers page by page', () => {
  it('follows the pages to a service on page 3, and stops where the index says it ends', async () => {
    const bazaar = await bazaarOf([...others, ledger], { maxLimit: 2 });
    const found = await searchServices([bazaar.url], ['ledger'], await depsOf());
    expect(found).toEqual({
      services: [
        expect.objectContaining({ name: 'balance', resource: ledger.resource, description: 'A ledger balance' }),
      ],
      errors: [],
    });
    expect(bazaar.lists()).toBe(3);
  });

  it('stops paging once it holds as many matches as it returns', async () => {
    const bazaar = await bazaarOf([...others, ledger, ...others], { maxLimit: 2 });
    const found = await searchServices([bazaar.url], ['ledger'], await depsOf(), { ...DEFAULTS, maxItems: 1 });
    expect(found.services.map((s) => s.resource)).toEqual([ledger.resource]);
    expect(bazaar.lists()).toBe(3);
  });

  it('reads no more than the page bound of an index that never ends, and finds nothing beyond it', async () => {
    const eight = Array.from({ length: 8 }, (_, i) => item(`https://more.example/${i}`, `Something else ${i}`));
    const items = [...eight, ledger];
    const bazaar = await bazaarOf(items, { maxLimit: 2, endless: true });
    const limits = { ...DEFAULTS, maxPages: 4 };
    const found = await searchServices([bazaar.url], ['ledger'], await depsOf(), limits);
    expect(found).toEqual({ services: [], errors: [] });
    expect(bazaar.lists()).toBe(4);
    expect((await searchServices([bazaar.url], ['filler'], await depsOf(), limits)).services).toHaveLength(0);
    expect((await searchServices([bazaar.url], ['else'], await depsOf(), limits)).services).toHaveLength(8);
  });

  it('reads no more than the byte bound over all pages of an index that never ends', async () => {
    const bazaar = await bazaarOf([], { maxLimit: 2, endless: true });
    const found = await searchServices([bazaar.url], ['ledger'], await depsOf(), {
      ...DEFAULTS,
      maxIndexBytes: 2000,
    });
    expect(found).toEqual({ services: [], errors: [] });
    expect(bazaar.lists()).toBeGreaterThan(1);
    expect(bazaar.lists()).toBeLessThan(10);
  });
});
