import { describe, expect, it } from 'vitest';
import { firstSentence, usdString } from '../../src/discovery/catalog.js';
import { paidTools as tools } from '../../tools/index.js';

describe('discovery text helpers', () => {
  it('write USD prices as plain decimals without floating-point noise', () => {
    expect([0.001, 0.005, 0.15, 3, 0.1 + 0.2, 10_000 / 10 ** 7].map(usdString)).toEqual([
      '0.001',
      '0.005',
      '0.15',
      '3',
      '0.3',
      '0.001',
    ]);
  });

  it('take the first sentence of a description, not stopping at abbreviations', () => {
    expect(firstSentence('Computes things for a coin (e.g. BTC, ETH) from candles. Then more.')).toBe(
      'Computes things for a coin (e.g. BTC, ETH) from candles.',
    );
    expect(firstSentence('Prices in dollars, i.e. USD. Second.')).toBe('Prices in dollars, i.e. USD.');
    expect(firstSentence('No full stop at all')).toBe('No full stop at all');
  });

  it('clip a long first sentence at a word boundary', () => {
    const long = `${'word '.repeat(60)}end.`;
    const clipped = firstSentence(long);
    expect(clipped.length).toBeLessThanOrEqual(161);
    expect(clipped).toMatch(/word…$/);
  });
});

describe('the examples every discovery surface advertises', () => {
  it('exist for every paid v2 tool and parse with its own input schema (the bazaar extension must validate)', () => {
    for (const tool of tools.filter((t) => t.group !== 'transfers')) {
      expect(tool.example, `${tool.name} has an example`).toBeDefined();
      expect(tool.input.safeParse(tool.example).success, `${tool.name}'s example parses`).toBe(true);
    }
  });
});
