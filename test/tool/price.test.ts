import { describe, expect, it } from 'vitest';
import {
  ACCEPTS,
  describeTool,
  priceSentence,
  priceTable,
  v2FaceOf,
  x402VersionOf,
  type Accepts,
} from '../../src/tool/price.js';
import { defineTool } from '../../src/tool/tool.js';
import { paidTools, tools } from '../../tools/index.js';
import { annuity } from '../../tools/annuity.js';

describe('the pricing rules', () => {
  it('derive every column from the dollar price: 6 decimals, Optimism $0.001 more, Stellar 7 decimals', () => {
    expect(priceTable({ usd: '0.001', accepts: 'every-network' })).toEqual({
      default: '1000',
      optimism: '2000',
      stellar: '10000',
    });
    expect(priceTable({ usd: '0.05', accepts: 'every-network' })).toEqual({
      default: '50000',
      optimism: '51000',
      stellar: '500000',
    });
    expect(priceTable({ usd: '0.15', accepts: 'base-and-solana' })).toEqual({ default: '150000' });
    expect(priceTable({ usd: '3.00', accepts: 'base-short-name' })).toEqual({ default: '3000000' });
    expect(priceTable({ usd: '0.001', accepts: 'base-v1' })).toEqual({ default: '1000' });
  });

  it('refuse a price that is not a whole number of units, or not a dollar amount', () => {
    expect(() => priceTable({ usd: '0.0000001', accepts: 'base-v1' })).toThrow(/whole number of units/);
    expect(() => priceTable({ usd: '0.00000001', accepts: 'every-network' })).toThrow(/whole number of units/);
    expect(() => priceTable({ usd: '$1', accepts: 'base-v1' })).toThrow(/not a dollar amount/);
  });

  it('give each policy its x402 version: version 1 only for base-v1', () => {
    const versions = Object.fromEntries(
      (Object.keys(ACCEPTS) as Accepts[]).map((accepts) => [
        accepts,
        x402VersionOf({ pricing: { usd: '1', accepts } }),
      ]),
    );
    expect(versions).toEqual({
      'every-network': 2,
      'base-and-solana': 2,
      'base-short-name': 2,
      'base-v1': 1,
      'base-v1-batch': 2,
    });
  });
});

describe('the v2 face of a base-v1 tool', () => {
  const transfers = paidTools.find((t) => t.pricing.accepts === 'base-v1')!;

  it('is the same tool under the base-v1-batch policy, one object per tool, and x402 version 2', () => {
    const face = v2FaceOf(transfers)!;
    expect(face).toBe(v2FaceOf(transfers));
    expect(face.pricing).toEqual({ ...transfers.pricing, accepts: 'base-v1-batch' });
    expect(x402VersionOf(face)).toBe(2);
    const { pricing: _listed, ...rest } = transfers;
    const { pricing: _face, ...same } = face;
    expect(same).toEqual(rest);
    expect(face.handler).toBe(transfers.handler);
  });

  it('exists for base-v1 tools only', () => {
    expect(v2FaceOf(annuity)).toBeUndefined();
    expect(paidTools.filter((t) => v2FaceOf(t))).toEqual([transfers]);
  });
});

describe('the price sentence', () => {
  it('is generated from the policy, with the dollar price, the units and where it is payable', () => {
    expect(priceSentence({ usd: '0.005', accepts: 'every-network' })).toBe(
      'Costs $0.005 per call (5000 USDC units; $0.006, 6000 units, on Optimism; 50000 units on Stellar, whose USDC has 7 decimals).',
    );
    expect(priceSentence({ usd: '0.15', accepts: 'base-and-solana' })).toBe(
      'Costs $0.15 per call (150000 USDC units), payable on Base or Solana only.',
    );
    expect(priceSentence({ usd: '0.001', accepts: 'base-v1' })).toMatch(/on Base only, with x402 version 1\.$/);
    expect(priceSentence(undefined)).toBe('Free (no payment).');
  });

  it('ends every description of the registry, once: no tool writes a price sentence of its own', () => {
    for (const tool of tools) {
      const sentence = priceSentence(tool.pricing);
      expect(tool.description.endsWith(` ${sentence}`), tool.name).toBe(true);
      expect(tool.description.split(/Costs |Free \(no payment\)/).length, tool.name).toBe(2);
    }
  });

  it('is appended by defineTool to what the tool says, and a paid tool gets its derived price table', () => {
    const spec = {
      ...annuity,
      description: 'Does a thing.',
      pricing: { usd: '0.002', accepts: 'every-network' as const },
    };
    const defined = defineTool(spec);
    expect(defined.description).toBe(describeTool('Does a thing.', spec.pricing));
    expect(defined.description).toBe(`Does a thing. ${priceSentence(spec.pricing)}`);
    expect(defined.price).toEqual({ default: '2000', optimism: '3000', stellar: '20000' });
  });
});
