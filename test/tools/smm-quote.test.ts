import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolContext } from '../../src/tool/tool.js';
import { startSmmTestbed, type SmmTestbed } from '../support/smm.js';
import { toolFailure } from '../support/upstreams/open-data.js';
import { smmQuote } from '../../tools/smm-quote.js';

let bed: SmmTestbed;
beforeAll(async () => {
  bed = await startSmmTestbed();
});
afterAll(async () => {
  await bed?.stop();
});
const ctx = (overrides: Partial<ToolContext> = {}) => bed.ctx(overrides);

describe('smm-quote', () => {
  it('quotes the panel cost, the fixed charge and the orderable range', async () => {
    const out = smmQuote.output.parse(
      await smmQuote.handler(smmQuote.input.parse({ serviceId: '1', quantity: '1000' }), ctx()),
    );
    expect(out).toEqual({
      serviceId: 1,
      name: 'Instagram Followers [Real, 30 days refill]',
      category: 'Instagram Followers',
      type: 'Default',
      quantity: 1000,
      ratePer1000: 0.9,
      panelCostUsd: 0.9,
      chargeUsd: 3,
      min: 50,
      max: 3333,
      serviceMax: 10000,
      orderable: true,
      problem: null,
    });
  });

  it('says why an order would be refused instead of refusing the quote', async () => {
    const out = await smmQuote.handler(smmQuote.input.parse({ serviceId: '1', quantity: '5000' }), ctx());
    expect(out).toMatchObject({ orderable: false, panelCostUsd: 4.5, problem: expect.stringMatching(/above 3333/) });
  });

  it('refuses an unknown service naming serviceId, and non-numbers naming the field', async () => {
    expect(
      await toolFailure(
        Promise.resolve().then(() =>
          smmQuote.handler(smmQuote.input.parse({ serviceId: '99', quantity: '10' }), ctx()),
        ),
      ),
    ).toMatchObject({ field: 'serviceId' });
    expect(smmQuote.input.safeParse({ serviceId: 'x', quantity: '10' }).error?.issues[0]?.path).toEqual(['serviceId']);
    expect(smmQuote.input.safeParse({ serviceId: '1', quantity: '2.5' }).error?.issues[0]?.path).toEqual(['quantity']);
  });
});
