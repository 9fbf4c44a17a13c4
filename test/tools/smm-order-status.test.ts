import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolContext } from '../../src/tool/tool.js';
import { startSmmTestbed, type SmmTestbed } from '../support/smm.js';
import { toolFailure } from '../support/upstreams/open-data.js';
import { smmOrder } from '../../tools/smm-order.js';
import { smmOrderStatus } from '../../tools/smm-order-status.js';

let bed: SmmTestbed;
beforeAll(async () => {
  bed = await startSmmTestbed();
});
afterAll(async () => {
  await bed?.stop();
});
const ctx = (overrides: Partial<ToolContext> = {}) => bed.ctx(overrides);
let n = 0;
const link = () => `https://www.tiktok.com/@tollbooth/video/${++n}`;

describe('smm-order-status', () => {
  it('answers a stored order with the panel status mapped to ours, and records the change', async () => {
    const placed = smmOrder.output.parse(
      await smmOrder.handler(smmOrder.input.parse({ serviceId: 2, link: link(), quantity: 100 }), ctx()),
    );
    const status = async () =>
      smmOrderStatus.output.parse(
        await smmOrderStatus.handler(smmOrderStatus.input.parse({ orderId: placed.orderId }), ctx()),
      );
    expect(await status()).toMatchObject({
      orderId: placed.orderId,
      status: 'pending',
      panelStatus: 'Pending',
      remains: 100,
      serviceId: 2,
      quantity: 100,
      chargeUsd: 3,
    });
    bed.panel.setStatus(Number(placed.orderId), 'Completed', 0);
    expect(await status()).toMatchObject({
      status: 'completed',
      panelStatus: 'Completed',
      remains: 0,
      startCount: 3572,
    });
    expect((await bed.store.toolState.getOrder(placed.orderId))?.status).toBe('completed');
  });

  it('answers an order not placed here with not_found, without asking the panel', async () => {
    const before = bed.panel.requests;
    const err = await toolFailure(
      Promise.resolve().then(() => smmOrderStatus.handler(smmOrderStatus.input.parse({ orderId: '23501999' }), ctx())),
    );
    expect(err).toMatchObject({ code: 'not_found', field: 'orderId' });
    expect(bed.panel.requests).toBe(before);
  });
});
