import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKalshiProvider, eventUrl } from '../../../src/providers/market/kalshi.js';
import type { Lookalike } from '../../support/upstreams/server.js';
import { KALSHI_FIXTURE, startKalshiLookalike } from '../../support/upstreams/kalshi.js';
import { toolFailure, upstreamFor } from '../../support/upstreams/open-data.js';

let lookalike: Lookalike;
beforeAll(async () => {
  lookalike = await startKalshiLookalike({ slowMs: 400 });
});
afterAll(async () => {
  await lookalike?.stop();
});

const fresh = () => createKalshiProvider(upstreamFor('kalshi', lookalike.url, { timeoutMs: 250 }));
const fed = KALSHI_FIXTURE[0]!;

describe('the Kalshi provider', () => {
  it('maps the event and its nested markets, reading dollar strings and fixed-point counts as numbers', async () => {
    const provider = fresh();
    expect(provider.source).toBe('Kalshi Trade API');
    const { data } = await provider.event('KXFEDDECISION-25DEC');
    expect(data).toMatchObject({
      eventTicker: fed.event_ticker,
      seriesTicker: fed.series_ticker,
      title: fed.title,
      subTitle: fed.sub_title,
      category: fed.category,
      mutuallyExclusive: true,
    });
    expect(data.markets).toHaveLength(fed.markets.length);
    const spec = fed.markets[0]!;
    expect(data.markets[0]).toEqual({
      ticker: spec.ticker,
      eventTicker: fed.event_ticker,
      title: spec.title,
      venue: 'Kalshi',
      status: spec.status,
      yesBid: Number(spec.yesBid),
      yesAsk: Number(spec.yesAsk),
      noBid: expect.closeTo(1 - Number(spec.yesAsk), 10),
      noAsk: expect.closeTo(1 - Number(spec.yesBid), 10),
      lastPrice: Number(spec.lastPrice),
      volume: Number(spec.volume),
      openInterest: Number(spec.openInterest),
      venueUrl: 'https://kalshi.com/markets/kxfeddecision/kxfeddecision-25dec',
    });
  });

  it('reads a market without the deprecated title (the others keep theirs), naming it by its YES outcome', async () => {
    const { data } = await fresh().event('KXTITLELESS-26');
    expect(data.markets.map((m) => [m.ticker, m.title])).toEqual([
      ['KXTITLELESS-26-A', 'Team A'],
      ['KXTITLELESS-26-B', 'Will Team B win the 2026 final?'],
    ]);
  });

  it('keeps fractional contract counts and a zero price exactly', async () => {
    const { data } = await fresh().event('KXFEDDECISION-25DEC');
    const hike = data.markets.find((m) => m.ticker.endsWith('-H25'))!;
    expect(hike.yesBid).toBe(0);
    expect(data.markets[0]!.openInterest).toBe(604211.5);
  });

  it('reports mutually_exclusive false as it is', async () => {
    const { data } = await fresh().event('KXSPACEXSTARSHIP-12');
    expect(data.mutuallyExclusive).toBe(false);
    expect(data.markets.map((m) => m.status)).toEqual(['active', 'finalized']);
  });

  it('builds market links from the series and event tickers in lower case', () => {
    expect(eventUrl('KXHIGHNY', 'KXHIGHNY-26JUL17')).toBe('https://kalshi.com/markets/kxhighny/kxhighny-26jul17');
  });

  it('answers an unknown or lower-cased ticker (HTTP 404) with not_found naming the ticker', async () => {
    for (const ticker of ['KXNOPE-99', 'kxfeddecision-25dec']) {
      const err = await toolFailure(fresh().event(ticker));
      expect(err).toMatchObject({ code: 'not_found', field: 'eventTicker' });
      expect(err.message).toContain(ticker);
    }
  });

  it('refuses the legacy integer-cent market shape as invalid upstream data, never a half-filled answer', async () => {
    lookalike.failNext('mismatch');
    const err = await toolFailure(fresh().event('KXFEDDECISION-25DEC'));
    expect(err.code).toBe('upstream_invalid');
    expect(err.message).toMatch(/yes_bid_dollars/);
  });

  it('serves a repeated ticker from the cache and shares concurrent requests', async () => {
    const provider = fresh();
    const before = lookalike.requests;
    const all = await Promise.all(Array.from({ length: 5 }, () => provider.event('KXSPACEXSTARSHIP-12')));
    expect(all.every((r) => !r.cached)).toBe(true);
    expect((await provider.event('KXSPACEXSTARSHIP-12')).cached).toBe(true);
    expect(lookalike.requests).toBe(before + 1);
  });

  const failures = [
    ['the error envelope with HTTP 200', 'error200', 1, 'upstream_unavailable'],
    ['truncated JSON', 'malformed', 1, 'upstream_invalid'],
    ['HTTP 500 on every attempt', '500', 2, 'upstream_unavailable'],
    ['HTTP 429 on every attempt', '429', 2, 'upstream_rate_limited'],
    ['no answer within the timeout', 'slow', 2, 'upstream_timeout'],
  ] as const;
  for (const [label, mode, times, code] of failures) {
    it(`answers ${label} with ${code}`, async () => {
      lookalike.failNext(mode, times);
      const err = await toolFailure(fresh().event('KXFEDDECISION-25DEC'));
      expect(err.code).toBe(code);
      expect(err.message).toMatch(/Kalshi Trade API.*Try again/);
    });
  }
});
