import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { ToolError } from '../../src/shared/errors.js';
import { silentLogger } from '../../src/shared/log.js';
import { createProviders } from '../../src/providers/index.js';
import { developmentIndicator } from '../../tools/development-indicator.js';
import { testContext } from '../support/context.js';
import type { Lookalike } from '../support/upstreams/server.js';
import { WB_COUNTRIES, WB_INDICATORS, startWorldBankLookalike } from '../support/upstreams/worldbank.js';

let lookalike: Lookalike;
beforeAll(async () => {
  lookalike = await startWorldBankLookalike();
});
afterAll(async () => {
  await lookalike?.stop();
});

const providers = () =>
  createProviders(loadConfig({ WORLDBANK_API_URL: lookalike.url, LOG_LEVEL: 'silent' }), silentLogger);
let shared: ReturnType<typeof providers> | undefined;

/** GET query parameters arrive as strings. */
async function call(query: Record<string, string>) {
  const result = await developmentIndicator.handler(
    developmentIndicator.input.parse(query),
    testContext({ providers: (shared ??= providers()) }),
  );
  return developmentIndicator.output.parse(result);
}

async function refusal(query: Record<string, string>): Promise<ToolError> {
  const err = await call(query).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolError);
  return err as ToolError;
}

const country = (iso3: string) => WB_COUNTRIES.find((c) => c.iso3 === iso3)!;

describe('development-indicator', () => {
  it('returns 2018–2023 by default, oldest year first, with the indicator name and count', async () => {
    const out = await call({ country: 'br', indicator: 'NY.GDP.MKTP.CD' });
    expect(out).toMatchObject({
      country: 'BR',
      indicator: 'NY.GDP.MKTP.CD',
      indicatorName: 'GDP (current US$)',
      count: 6,
    });
    expect(out.series.map((p) => p.year)).toEqual([2018, 2019, 2020, 2021, 2022, 2023]);
    for (const p of out.series) expect(p.value).toBe(WB_INDICATORS['NY.GDP.MKTP.CD']!.value(country('BRA'), p.year));
  });

  it('accepts ISO-3 codes and explicit years given as query strings', async () => {
    const out = await call({ country: 'USA', indicator: 'SP.POP.TOTL', startYear: '2000', endYear: '2004' });
    expect(out.country).toBe('USA');
    expect(out.series.map((p) => p.year)).toEqual([2000, 2001, 2002, 2003, 2004]);
    expect(out.count).toBe(5);
  });

  it('leaves out years without an observation (null upstream) and counts only what it returns', async () => {
    const out = await call({ country: 'NG', indicator: 'FP.CPI.TOTL.ZG', startYear: '2018', endYear: '2024' });
    expect(out.series.map((p) => p.year)).toEqual([2018, 2019, 2022, 2023]);
    expect(out.count).toBe(4);
    expect(out.series.every((p) => typeof p.value === 'number')).toBe(true);
  });

  it('answers an unknown country (upstream message 120) with 400 on the country field', async () => {
    const err = await refusal({ country: 'XK', indicator: 'NY.GDP.MKTP.CD' });
    expect(err).toMatchObject({ code: 'invalid_input', field: 'country' });
    expect(err.httpStatus).toBe(400);
  });

  it('answers an unknown indicator (upstream message 175) with 404 on the indicator field', async () => {
    const err = await refusal({ country: 'BR', indicator: 'NY.GDP.NOPE' });
    expect(err).toMatchObject({ code: 'not_found', field: 'indicator' });
    expect(err.httpStatus).toBe(404);
  });

  it('answers a range without any observation with 404 instead of an empty paid answer', async () => {
    for (const query of [
      { country: 'BR', indicator: 'SI.POV.NAHC', startYear: '2016', endYear: '2019' },
      { country: 'BR', indicator: 'NY.GDP.MKTP.CD', startYear: '2024', endYear: '2024' },
      { country: 'BR', indicator: 'NY.GDP.MKTP.CD', startYear: '2030', endYear: '2031' },
    ]) {
      const err = await refusal(query);
      expect(err.code).toBe('not_found');
      expect(err.message).toMatch(/no observation.*wider year range/);
    }
  });

  it('refuses malformed codes and reversed years at the boundary', () => {
    const bad = (q: Record<string, string>) => developmentIndicator.input.safeParse(q);
    expect(bad({ country: 'BRAZIL', indicator: 'NY.GDP.MKTP.CD' }).success).toBe(false);
    expect(bad({ country: 'BR', indicator: 'NY GDP' }).success).toBe(false);
    const reversed = bad({ country: 'BR', indicator: 'SP.POP.TOTL', startYear: '2020', endYear: '2010' });
    expect(reversed.success).toBe(false);
    expect(reversed.error?.issues[0]?.path).toEqual(['endYear']);
  });
});
