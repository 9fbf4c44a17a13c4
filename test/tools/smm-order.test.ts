import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolContext } from '../../src/tool/tool.js';
import { startSmmTestbed, type SmmTestbed } from '../support/smm.js';
import { toolFailure } from '../support/upstreams/open-data.js';
import { smmOrder } from '../../tools/smm-order.js';

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

describe('smm-order', () => {
  it('prechecks the service and quantity against the panel list: fine orders pass, others are refused naming the field', async () => {
    const check = async (body: Record<string, unknown>) => smmOrder.precheck!(smmOrder.input.parse(body), ctx());
    await expect(check({ serviceId: 1, link: link(), quantity: 100 })).resolves.toBeUndefined();
    expect(await toolFailure(check({ serviceId: 1, link: link(), quantity: 49 }))).toMatchObject({
      code: 'invalid_input',
      field: 'quantity',
    });
    expect(await toolFailure(check({ serviceId: 1, link: link(), quantity: 3334 }))).toMatchObject({
      code: 'invalid_input',
      field: 'quantity',
    });
    expect(await toolFailure(check({ serviceId: 4, link: link(), quantity: 100 }))).toMatchObject({
      code: 'invalid_input',
      field: 'serviceId',
    });
    expect(await toolFailure(check({ serviceId: 99, link: link(), quantity: 100 }))).toMatchObject({
      code: 'invalid_input',
      field: 'serviceId',
    });
  });

  it('places the order, stores it with its payer and payment, and answers ordered with the charge', async () => {
    const body = { serviceId: 3, link: link(), quantity: 5000 };
    const out = smmOrder.output.parse(await smmOrder.handler(smmOrder.input.parse(body), ctx()));
    const placed = bed.panel.orders.at(-1)!;
    expect(out).toEqual({ status: 'ordered', orderId: String(placed.order), chargeUsd: 3 });
    expect(placed).toMatchObject({ service: 3, link: body.link, quantity: 5000 });
    expect(await bed.store.toolState.getOrder(out.orderId)).toMatchObject({
      orderId: out.orderId,
      ...body,
      chargeUsd: 3,
      status: 'ordered',
      payer: bed.payer.payer,
      replayKey: bed.payer.replayKey,
    });
  });

  it('refuses to run without a verified payment', async () => {
    const err = await toolFailure(
      Promise.resolve().then(() =>
        smmOrder.handler(
          smmOrder.input.parse({ serviceId: 1, link: link(), quantity: 100 }),
          ctx({ payer: undefined }),
        ),
      ),
    );
    expect(err.code).toBe('internal');
  });

  it('stores nothing when the panel refuses the order', async () => {
    const before = bed.panel.orders.length;
    bed.panel.setBalance(0);
    const err = await toolFailure(
      Promise.resolve().then(() =>
        smmOrder.handler(smmOrder.input.parse({ serviceId: 1, link: link(), quantity: 100 }), ctx()),
      ),
    );
    bed.panel.setBalance(1000);
    expect(err.code).toBe('upstream_unavailable');
    expect(bed.panel.orders.length).toBe(before);
  });

  it('refuses before payment, naming the currency, on a panel whose account bills in EUR, GBP or INR', async () => {
    for (const currency of ['EUR', 'GBP', 'INR']) {
      const other = await startSmmTestbed({ currency });
      try {
        const body = smmOrder.input.parse({ serviceId: 3, link: link(), quantity: 100 });
        const err = await toolFailure((async () => smmOrder.precheck!(body, other.ctx()))());
        expect(err).toMatchObject({ code: 'not_implemented', details: { currency } });
        expect(err.message).toContain(currency);
        expect(err.message).toMatch(/SMM_PANEL_URL/);
        expect(other.panel.orders).toEqual([]);
      } finally {
        await other.stop();
      }
    }
  });
});
