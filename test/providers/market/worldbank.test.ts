import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorldBankProvider, messageOf } from '../../../src/providers/market/worldbank.js';
import type { Lookalike } from '../../support/upstreams/server.js';
import { toolFailure, upstreamFor } from '../../support/upstreams/open-data.js';
import { WB_COUNTRIES, WB_INDICATORS, startWorldBankLookalike } from '../../support/upstreams/worldbank.js';

let lookalike: Lookalike;
beforeAll(async () => {
  lookalike = await startWorldBankLookalike({ slowMs: 400 });
});
afterAll(async () => {
  await lookalike?.stop();
});

const fresh = () => createWorldBankProvider(upstreamFor('worldbank', lookalike.url, { timeoutMs: 250 }));
const brazil = WB_COUNTRIES.find((c) => c.iso3 === 'BRA')!;
const nigeria = WB_COUNTRIES.find((c) => c.iso3 === 'NGA')!;
const gdp = { country: 'BR', indicator: 'NY.GDP.MKTP.CD', startYear: 2018, endYear: 2023 };

describe('the World Bank provider', () => {
  it('returns the series oldest year first with the indicator and country names', async () => {
    const provider = fresh();
    expect(provider.source).toBe('World Bank Indicators API');
    const { data } = await provider.series(gdp);
    expect(data.indicatorName).toBe('GDP (current US$)');
    expect(data.countryName).toBe('Brazil');
    expect(data.observations.map((o) => o.year)).toEqual([2018, 2019, 2020, 2021, 2022, 2023]);
    for (const o of data.observations) expect(o.value).toBe(WB_INDICATORS['NY.GDP.MKTP.CD']!.value(brazil, o.year));
  });

  it('accepts ISO-3 codes alike', async () => {
    const { data } = await fresh().series({ ...gdp, country: 'BRA' });
    expect(data.countryName).toBe('Brazil');
    expect(data.observations).toHaveLength(6);
  });

  it('leaves out years whose value is null, and counts the rows it received', async () => {
    const { data } = await fresh().series({
      country: 'NGA',
      indicator: 'FP.CPI.TOTL.ZG',
      startYear: 2018,
      endYear: 2024,
    });
    expect(data.rows).toBe(7);
    expect(data.observations.map((o) => o.year)).toEqual([2018, 2019, 2022, 2023]);
    expect(data.observations[0]!.value).toBe(WB_INDICATORS['FP.CPI.TOTL.ZG']!.value(nigeria, 2018));
  });

  it('answers a range without rows ([meta, null]) with an empty series and no name', async () => {
    const { data } = await fresh().series({ ...gdp, startYear: 2030, endYear: 2035 });
    expect(data).toMatchObject({ observations: [], rows: 0, indicatorName: null });
  });

  it('maps the HTTP-200 message 120 (unknown country) to invalid_input on the country field', async () => {
    const err = await toolFailure(fresh().series({ ...gdp, country: 'XK' }));
    expect(err).toMatchObject({ code: 'invalid_input', field: 'country' });
    expect(err.httpStatus).toBe(400);
    expect(err.message).toMatch(/"XK".*ISO/);
  });

  it('maps the HTTP-200 message 175 (unknown or archived indicator) to not_found on the indicator field', async () => {
    for (const indicator of ['NY.GDP.NOPE', 'EN.ATM.CO2E.KT', 'ny.gdp.mktp.cd']) {
      const err = await toolFailure(fresh().series({ ...gdp, indicator }));
      expect(err).toMatchObject({ code: 'not_found', field: 'indicator' });
      expect(err.httpStatus).toBe(404);
      expect(err.message).toContain(indicator);
    }
  });

  it('reads the message form with or without a trailing null, and tells other messages apart', () => {
    expect(messageOf([{ message: [{ id: '120', key: 'Invalid value', value: 'x' }] }])?.id).toBe('120');
    expect(messageOf([{ message: [{ id: '175', key: 'Invalid format', value: 'y' }] }, null])?.id).toBe('175');
    expect(messageOf([{ page: 1 }, []])).toBeUndefined();
    expect(messageOf({ message: 'not an array' })).toBeUndefined();
  });

  it('serves a repeated query from the cache with one upstream request', async () => {
    const provider = fresh();
    const before = lookalike.requests;
    const [a, b] = await Promise.all([provider.series(gdp), provider.series(gdp)]);
    const c = await provider.series(gdp);
    expect(lookalike.requests).toBe(before + 1);
    expect([a.cached, b.cached, c.cached]).toEqual([false, false, true]);
    expect(c.fetchedAt).toBe(a.fetchedAt);
  });

  const failures = [
    ['another HTTP-200 message (service unavailable)', 'error200', 1, 'upstream_unavailable'],
    ['values in the wrong type', 'mismatch', 1, 'upstream_invalid'],
    ['truncated JSON', 'malformed', 1, 'upstream_invalid'],
    ['HTTP 500 on every attempt', '500', 2, 'upstream_unavailable'],
    ['HTTP 429 on every attempt', '429', 2, 'upstream_rate_limited'],
    ['no answer within the timeout', 'slow', 2, 'upstream_timeout'],
  ] as const;
  for (const [label, mode, times, code] of failures) {
    it(`answers ${label} with ${code}`, async () => {
      lookalike.failNext(mode, times);
      const err = await toolFailure(fresh().series(gdp));
      expect(err.code).toBe(code);
      expect(err.message).toMatch(/World Bank Indicators API.*Try again/);
    });
  }
});
