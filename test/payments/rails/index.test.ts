import { describe, expect, it } from 'vitest';
import { preloadRails, RAILS, railServes } from '../../../src/payments/rails/index.js';
import type { Rail, RailServer } from '../../../src/payments/rails/rail.js';
import { DEFAULT_NETWORKS, type NetworkEntry } from '../../../src/shared/networks.js';

const byId = (id: string) => RAILS.find((r) => r.id === id)!;
const network = (id: string) => DEFAULT_NETWORKS.find((n) => n.id === id)!;
const base = network('eip155:8453');
const polygon = network('eip155:137');
const baseExactOnly: NetworkEntry = { ...base, schemes: ['exact'] };

/** RAILS with their loaders replaced by counters of what was asked for (the rail infos stay the real ones). */
function countingRails(): { rails: Rail[]; servers: string[]; full: string[] } {
  const servers: string[] = [];
  const full: string[] = [];
  const rails = RAILS.map((rail) => ({
    ...rail,
    server: async () => (servers.push(rail.id), {} as RailServer),
    sdk: async () => {
      full.push(rail.id);
      throw new Error('the whole SDK part is never preloaded');
    },
  }));
  return { rails, servers, full };
}

describe('railServes', () => {
  it('pays upto on a network only when the network lists upto', () => {
    expect(railServes(byId('evm-upto'), base)).toBe(true);
    expect(railServes(byId('evm-upto'), baseExactOnly)).toBe(false);
    expect(railServes(byId('evm-exact'), baseExactOnly)).toBe(true);
  });

  it('pays version 1 only on a network with a short name, and a family only on its own networks', () => {
    expect(railServes(byId('evm-exact-v1'), base)).toBe(true);
    expect(railServes(byId('evm-exact-v1'), polygon)).toBe(false);
    expect(railServes(byId('svm-exact'), base)).toBe(false);
  });
});

describe('preloadRails', () => {
  it('loads the server parts of the rails paid on the given networks, and never a whole SDK part', async () => {
    const { rails, servers, full } = countingRails();
    await preloadRails([baseExactOnly, polygon], rails);
    expect(servers).toEqual(['evm-exact', 'evm-exact-v1']);
    expect(full).toEqual([]);
  });

  it('loads the upto server part too when a network offers upto', async () => {
    const { rails, servers } = countingRails();
    await preloadRails([base], rails);
    expect(servers).toEqual(['evm-exact', 'evm-upto', 'evm-exact-v1']);
  });
});

describe('RAILS', () => {
  it('builds every whole rail on its own server part: the same scheme, identify and window check', async () => {
    for (const rail of RAILS) {
      const [server, sdk] = await Promise.all([rail.server(), rail.sdk()]);
      expect(sdk.identify, rail.id).toBe(server.identify);
      expect(sdk.serverScheme, rail.id).toBe(server.serverScheme);
      expect(sdk.checkWindow, rail.id).toBe(server.checkWindow);
      expect(typeof sdk.registerInProcess, rail.id).toBe('function');
    }
  });

  it('loads a part once: every caller gets the same one', async () => {
    const rail = byId('evm-exact');
    expect(await rail.server()).toBe(await rail.server());
  });
});
