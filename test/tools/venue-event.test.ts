import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { ToolError } from '../../src/shared/errors.js';
import { silentLogger } from '../../src/shared/log.js';
import { createProviders } from '../../src/providers/index.js';
import { venueEvent } from '../../tools/venue-event.js';
import { testContext } from '../support/context.js';
import { KALSHI_FIXTURE, startKalshiLookalike } from '../support/upstreams/kalshi.js';
import type { Lookalike } from '../support/upstreams/server.js';

let lookalike: Lookalike;
beforeAll(async () => {
  lookalike = await startKalshiLookalike();
});
afterAll(async () => {
  await lookalike?.stop();
});

const providers = () =>
  createProviders(loadConfig({ KALSHI_API_URL: lookalike.url, LOG_LEVEL: 'silent' }), silentLogger);

async function call(body: unknown, own = providers()) {
  const result = await venueEvent.handler(venueEvent.input.parse(body), testContext({ providers: own }));
  return venueEvent.output.parse(result);
}

async function refusal(body: unknown): Promise<ToolError> {
  const err = await call(body).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolError);
  return err as ToolError;
}

describe('venue-event', () => {
  it('returns the event with every market, its quotes as numbers and a link per market', async () => {
    const fed = KALSHI_FIXTURE[0]!;
    const out = await call({ eventTicker: fed.event_ticker });
    expect(out).toMatchObject({
      eventTicker: fed.event_ticker,
      title: fed.title,
      subTitle: fed.sub_title,
      seriesTicker: fed.series_ticker,
      category: fed.category,
      mutuallyExclusive: true,
      marketCount: fed.markets.length,
      source: 'Kalshi Trade API',
    });
    expect(out.markets.map((m) => m.ticker)).toEqual(fed.markets.map((m) => m.ticker));
    fed.markets.forEach((spec, i) => {
      const m = out.markets[i]!;
      expect([m.yesBid, m.yesAsk, m.lastPrice, m.volume, m.openInterest]).toEqual(
        [spec.yesBid, spec.yesAsk, spec.lastPrice, spec.volume, spec.openInterest].map(Number),
      );
      expect(m.noBid).toBeCloseTo(1 - Number(spec.yesAsk), 10);
      expect(m.noAsk).toBeCloseTo(1 - Number(spec.yesBid), 10);
      expect(m).toMatchObject({ eventTicker: fed.event_ticker, venue: 'Kalshi', status: spec.status });
      expect(m.venueUrl).toBe('https://kalshi.com/markets/kxfeddecision/kxfeddecision-25dec');
    });
  });

  it('keeps prices between 0 and 1 (implied probability)', async () => {
    const out = await call({ eventTicker: 'KXFEDDECISION-25DEC' });
    for (const m of out.markets)
      for (const p of [m.yesBid, m.yesAsk, m.noBid, m.noAsk, m.lastPrice]) expect(p >= 0 && p <= 1).toBe(true);
  });

  it('reports an event whose markets do not partition the outcomes as not mutually exclusive', async () => {
    const out = await call({ eventTicker: 'KXSPACEXSTARSHIP-12' });
    expect(out.mutuallyExclusive).toBe(false);
    expect(out.marketCount).toBe(2);
  });

  it('upper-cases a lower-case ticker before asking the venue', async () => {
    const out = await call({ eventTicker: 'kxspacexstarship-12' });
    expect(out.eventTicker).toBe('KXSPACEXSTARSHIP-12');
  });

  it('answers an unknown ticker with not_found on the eventTicker field', async () => {
    const err = await refusal({ eventTicker: 'KXNOSUCHEVENT-99' });
    expect(err).toMatchObject({ code: 'not_found', field: 'eventTicker' });
    expect(err.httpStatus).toBe(404);
    expect(err.message).toMatch(/KXNOSUCHEVENT-99/);
  });

  it('answers an event without markets with not_found instead of an empty paid answer', async () => {
    lookalike.failNext('empty');
    const err = await refusal({ eventTicker: 'KXFEDDECISION-25DEC' });
    expect(err.code).toBe('not_found');
    expect(err.message).toMatch(/without any market/);
  });

  it('refuses tickers with characters the venue never uses at the boundary', () => {
    expect(venueEvent.input.safeParse({ eventTicker: '../markets' }).success).toBe(false);
    expect(venueEvent.input.safeParse({ eventTicker: '' }).success).toBe(false);
  });
});
