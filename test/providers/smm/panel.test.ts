import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Logger } from '../../../src/shared/log.js';
import { createSmmPanelProvider, mapPanelStatus, PANEL_STATUS_MAP } from '../../../src/providers/smm/panel.js';
import { toolFailure, upstreamFor } from '../../support/upstreams/open-data.js';
import {
  PANEL_KEY,
  SERVICES,
  startSmmPanelLookalike,
  type SmmPanelLookalike,
  type SmmPanelLookalikeOptions,
} from '../../support/upstreams/smm-panel.js';

let panel: SmmPanelLookalike;
beforeAll(async () => {
  panel = await startSmmPanelLookalike({ slowMs: 400 });
});
afterAll(async () => {
  await panel?.stop();
});

const lines: string[] = [];
const log: Logger = {
  info: (m, f) => lines.push(JSON.stringify({ m, ...f })),
  warn: (m, f) => lines.push(JSON.stringify({ m, ...f })),
  error: (m, f) => lines.push(JSON.stringify({ m, ...f })),
};
const fresh = (key: string | undefined = PANEL_KEY, url = `${panel.url}/api/v2`) =>
  createSmmPanelProvider(upstreamFor('smm', url, { timeoutMs: 250 }), key, log);
let link = 0;
const nextLink = () => `https://www.instagram.com/p/provider-${++link}/`;

describe('the marketing panel provider: services', () => {
  it('reads the loosely typed service list (ids, rates and limits as strings or numbers) with a form-encoded POST', async () => {
    const { data } = await fresh().services();
    expect(data).toHaveLength(6);
    expect(data[0]).toEqual({
      serviceId: 1,
      name: 'Instagram Followers [Real, 30 days refill]',
      type: 'Default',
      category: 'Instagram Followers',
      ratePer1000: 0.9,
      min: 50,
      max: 10000,
      refill: true,
      cancel: true,
    });
    expect(data[1]).toMatchObject({ serviceId: 2, ratePer1000: 0.15, refill: false, cancel: false });
    expect(data[2]).toMatchObject({ serviceId: 3, ratePer1000: 0.02, min: 100, refill: false, cancel: true });
    expect(data[3]).toMatchObject({ serviceId: 4, refill: true });
  });

  it('caches the list: a second call within the TTL does not reach the panel', async () => {
    const provider = fresh();
    await provider.services();
    const before = panel.actions.services;
    expect((await provider.services()).cached).toBe(true);
    expect(await provider.service(3)).toMatchObject({ name: 'TikTok Views' });
    expect(panel.actions.services).toBe(before);
  });

  it('refuses a service the panel does not sell with invalid_input naming serviceId', async () => {
    const err = await toolFailure(fresh().service(999));
    expect(err).toMatchObject({ code: 'invalid_input', field: 'serviceId' });
    expect(err.message).toMatch(/smm-services/);
  });

  it('answers an unreadable list with upstream_invalid, an empty list with no services', async () => {
    panel.failNext('mismatch');
    expect((await toolFailure(fresh().services())).code).toBe('upstream_invalid');
    panel.failNext('empty');
    expect((await fresh().services()).data).toEqual([]);
  });

  it('reports a refused key as an operator problem and never writes the key into a message or a log line', async () => {
    const err = await toolFailure(fresh('wrong-key-123456').services());
    expect(err.code).toBe('upstream_unavailable');
    expect(err.message).toMatch(/credentials/);
    expect(err.message).not.toContain('wrong-key-123456');
    expect(lines.join('\n')).toMatch(/refused our API key/);
    expect(lines.join('\n')).not.toContain('wrong-key-123456');
    expect(lines.join('\n')).not.toContain(PANEL_KEY);
  });

  it('refuses every call with not_implemented when no panel URL or key is configured', async () => {
    const noKey = createSmmPanelProvider(upstreamFor('smm', `${panel.url}/api/v2`), undefined, log);
    expect(noKey.configured).toBe(false);
    expect((await toolFailure(noKey.services())).code).toBe('not_implemented');
    const noUrl = createSmmPanelProvider(upstreamFor('smm', 'http://127.0.0.1:9', { baseUrl: '' }), PANEL_KEY, log);
    expect(noUrl.configured).toBe(false);
    expect((await toolFailure(noUrl.addOrder({ serviceId: 1, link: nextLink(), quantity: 100 }))).message).toMatch(
      /SMM_PANEL_URL and SMM_PANEL_KEY/,
    );
  });
});

describe('the marketing panel provider: orders', () => {
  it('places an order and returns the panel order id as a string (numbers and strings alike)', async () => {
    const id = await fresh().addOrder({ serviceId: 1, link: nextLink(), quantity: 100 });
    expect(id).toBe(String(panel.orders.at(-1)!.order));
    const other = await startSmmPanelLookalike({ orderIdAsString: true, firstOrder: 900 });
    try {
      expect(await fresh(PANEL_KEY, other.url).addOrder({ serviceId: 2, link: nextLink(), quantity: 10 })).toBe('900');
    } finally {
      await other.stop();
    }
  });

  it("maps the panel's refusals (HTTP 200 error bodies) to errors naming the field to fix", async () => {
    const provider = fresh();
    const low = await toolFailure(provider.addOrder({ serviceId: 1, link: nextLink(), quantity: 10 }));
    expect(low).toMatchObject({ code: 'invalid_input', field: 'quantity', details: { min: 50 } });
    const high = await toolFailure(provider.addOrder({ serviceId: 1, link: nextLink(), quantity: 20000 }));
    expect(high).toMatchObject({ code: 'invalid_input', field: 'quantity', details: { max: 10000 } });
    expect(await toolFailure(provider.addOrder({ serviceId: 77, link: nextLink(), quantity: 100 }))).toMatchObject({
      code: 'invalid_input',
      field: 'serviceId',
    });
    const duplicate = nextLink();
    await provider.addOrder({ serviceId: 1, link: duplicate, quantity: 100 });
    expect(await toolFailure(provider.addOrder({ serviceId: 1, link: duplicate, quantity: 100 }))).toMatchObject({
      code: 'conflict',
      field: 'link',
    });
    panel.setBalance(0.01);
    const broke = await toolFailure(provider.addOrder({ serviceId: 1, link: nextLink(), quantity: 100 }));
    expect(broke.code).toBe('upstream_unavailable');
    expect(broke.message).toMatch(/out of funds/);
    panel.setBalance(1000);
    panel.errorText = 'Incorrect request';
    panel.failNext('error200');
    expect((await toolFailure(provider.addOrder({ serviceId: 1, link: nextLink(), quantity: 100 }))).code).toBe(
      'upstream_unavailable',
    );
  });

  it('never retries an order: a 500 or a reset is one request and an error', async () => {
    for (const mode of ['500', 'reset'] as const) {
      const provider = fresh();
      await provider.services();
      const before = { requests: panel.requests, orders: panel.orders.length };
      panel.failNext(mode, 1, (req) => req.rawBody.includes('action=add'));
      expect((await toolFailure(provider.addOrder({ serviceId: 1, link: nextLink(), quantity: 100 }))).code).toBe(
        'upstream_unavailable',
      );
      expect(panel.requests).toBe(before.requests + 1);
      expect(panel.orders.length).toBe(before.orders);
    }
  });

  it('reports a slow order as a timeout after one request, although the panel may still place it', async () => {
    const before = { requests: panel.requests, orders: panel.orders.length };
    panel.failNext('slow', 1, (req) => req.rawBody.includes('action=add'));
    expect((await toolFailure(fresh().addOrder({ serviceId: 1, link: nextLink(), quantity: 100 }))).code).toBe(
      'upstream_timeout',
    );
    expect(panel.requests).toBe(before.requests + 1);
    await vi.waitFor(() => expect(panel.orders.length).toBe(before.orders + 1));
  });

  it('never joins two identical concurrent orders into one: each reaches the panel (which refuses the duplicate link)', async () => {
    const provider = fresh();
    const same = { serviceId: 5, link: nextLink(), quantity: 100 };
    const before = { requests: panel.requests, orders: panel.orders.length };
    const results = await Promise.allSettled([provider.addOrder(same), provider.addOrder(same)]);
    expect(panel.requests - before.requests).toBe(2);
    expect(panel.orders.length - before.orders).toBe(1);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
  });

  it('reads an order status and maps the panel word to our status values', async () => {
    const provider = fresh();
    const id = await provider.addOrder({ serviceId: 1, link: nextLink(), quantity: 200 });
    const { data } = await provider.orderStatus(id);
    expect(data).toEqual({
      status: 'pending',
      panelStatus: 'Pending',
      charge: 0.18,
      startCount: 0,
      remains: 200,
      currency: 'USD',
    });
    panel.setStatus(Number(id), 'In progress', 120);
    expect((await fresh().orderStatus(id)).data).toMatchObject({
      status: 'in_progress',
      panelStatus: 'In progress',
      remains: 120,
      startCount: 3572,
    });
    panel.setStatus(Number(id), 'Cancelled');
    expect((await fresh().orderStatus(id)).data.status).toBe('canceled');
    expect((await toolFailure(fresh().orderStatus('424242'))).toString()).toMatch(/424242/);
    expect(await toolFailure(fresh().orderStatus('424242'))).toMatchObject({ code: 'not_found', field: 'orderId' });
    panel.failNext('mismatch', 1, (req) => req.rawBody.includes('action=status'));
    expect((await toolFailure(fresh().orderStatus(id))).code).toBe('upstream_invalid');
  });

  it('has a documented status table; unknown words are unknown', () => {
    expect(PANEL_STATUS_MAP).toEqual({
      pending: 'pending',
      'in progress': 'in_progress',
      processing: 'in_progress',
      completed: 'completed',
      partial: 'partial',
      canceled: 'canceled',
      cancelled: 'canceled',
    });
    expect(mapPanelStatus(' COMPLETED ')).toBe('completed');
    expect(mapPanelStatus('Refunded')).toBe('unknown');
  });
});

/** A provider over a panel look-alike started with `options`, for one test; `use` runs with it, then it stops. */
async function withPanel(options: SmmPanelLookalikeOptions, use: (p: ReturnType<typeof fresh>) => Promise<void>) {
  const other = await startSmmPanelLookalike(options);
  try {
    await use(fresh(PANEL_KEY, `${other.url}/api/v2`));
  } finally {
    await other.stop();
  }
}

describe('the marketing panel provider: the account currency (action=balance)', () => {
  it('accepts a panel whose balance is in USD, in any case', async () => {
    await withPanel({ currency: 'usd' }, async (p) => expect((await p.services()).data).toHaveLength(6));
  });

  it('refuses a panel billing in another currency with not_implemented naming it and the setting', async () => {
    for (const currency of ['EUR', 'GBP', 'IRR', 'INR']) {
      await withPanel({ currency }, async (p) => {
        const err = await toolFailure(p.services());
        expect(err).toMatchObject({ code: 'not_implemented', details: { currency } });
        expect(err.message).toContain(currency);
        expect(err.message).toMatch(/SMM_PANEL_URL/);
        expect((await toolFailure(p.service(3))).code).toBe('not_implemented');
      });
    }
  });

  it('refuses a panel that does not say its currency, or says something that is not a currency code', async () => {
    for (const currency of [null, 'dollars']) {
      await withPanel({ currency }, async (p) => {
        expect(await toolFailure(p.services())).toMatchObject({ code: 'upstream_invalid' });
      });
    }
  });

  it('reads limits given as decimal strings ("10.00"), rounding a fractional minimum up and maximum down', async () => {
    const services = [
      { ...SERVICES[0]!, service: 7, min: '10.00', max: '5000.00' },
      { ...SERVICES[0]!, service: 8, min: '10.5', max: '99.9' },
    ];
    await withPanel({ services }, async (p) => {
      expect(await p.service(7)).toMatchObject({ min: 10, max: 5000 });
      expect(await p.service(8)).toMatchObject({ min: 11, max: 99 });
    });
  });
});
