import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolContext } from '../../src/tool/tool.js';
import { startSmmTestbed, type SmmTestbed } from '../support/smm.js';
import { smmServices } from '../../tools/smm-services.js';

let bed: SmmTestbed;
beforeAll(async () => {
  bed = await startSmmTestbed();
});
afterAll(async () => {
  await bed?.stop();
});
const ctx = (overrides: Partial<ToolContext> = {}) => bed.ctx(overrides);

describe('smm-services', () => {
  const search = async (query: Record<string, string>) =>
    smmServices.output.parse(await smmServices.handler(smmServices.input.parse(query), ctx()));

  it('lists what an order can buy, with each maximum lowered to what the price covers, and leaves out what it cannot', async () => {
    const all = await search({});
    expect(all.services.map((s) => s.serviceId)).toEqual([1, 2, 3, 5, 6]);
    expect(all).toMatchObject({ total: 5, count: 5, chargeUsd: 3 });
    expect(all.services[0]).toMatchObject({ serviceId: 1, max: 3333, min: 50, ratePer1000: 0.9, refill: true });
  });

  it('filters by words, category and platform, any case, and limits the count', async () => {
    expect((await search({ q: 'instagram LIKES' })).services.map((s) => s.serviceId)).toEqual([2]);
    expect((await search({ category: 'views' })).services.map((s) => s.serviceId)).toEqual([3]);
    expect((await search({ platform: 'Instagram' })).services.map((s) => s.serviceId)).toEqual([1, 2]);
    expect(await search({ platform: 'instagram', limit: '1' })).toMatchObject({ total: 2, count: 1 });
    expect((await search({ q: 'spotify' })).services).toEqual([]);
    expect(smmServices.input.safeParse({ limit: '101' }).success).toBe(false);
  });
});
