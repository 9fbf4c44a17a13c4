import { z } from 'zod';
import { ToolError } from '../src/shared/errors.js';
import { defineTool, type ToolContext } from '../src/tool/tool.js';

const MIN_YEAR = 1960;
const MAX_YEAR = 2100;

/** Query-string year: GET parameters arrive as strings, so the value is coerced to a number. */
function yearSchema(defaultValue: number, which: string) {
  return z.coerce
    .number()
    .int()
    .min(MIN_YEAR)
    .max(MAX_YEAR)
    .default(defaultValue)
    .describe(
      `${which} year of the series, inclusive; integer ${MIN_YEAR}–${MAX_YEAR}, default ${defaultValue}. ` +
        'Query-string text such as "2015" is read as a number.',
    );
}

const DevelopmentIndicatorInputSchema = () =>
  z
    .object({
      country: z
        .string()
        .trim()
        .regex(/^[A-Za-z]{2,3}$/, 'must be an ISO 3166 alpha-2 or alpha-3 country code, e.g. BR or BRA')
        .toUpperCase()
        .describe('ISO-2 or ISO-3 country code, e.g. `BR` or `BRA` (any case; upper-cased).'),
      indicator: z
        .string()
        .trim()
        .min(1)
        .max(64)
        .regex(
          /^[A-Za-z0-9._]+$/,
          'must be an indicator code of letters, digits, dots and underscores, e.g. NY.GDP.MKTP.CD',
        )
        .describe(
          'Indicator code, case-sensitive, e.g. `NY.GDP.MKTP.CD` (GDP, current US$), `SP.POP.TOTL` (population), ' +
            '`FP.CPI.TOTL.ZG` (inflation). Letters, digits, dots and underscores; at most 64 characters.',
        ),
      startYear: yearSchema(2018, 'First'),
      endYear: yearSchema(2023, 'Last'),
    })
    .superRefine((input, ctx) => {
      if (typeof input.startYear === 'number' && typeof input.endYear === 'number' && input.startYear > input.endYear) {
        ctx.addIssue({
          code: 'custom',
          path: ['endYear'],
          message: `endYear (${input.endYear}) must not be before startYear (${input.startYear}).`,
        });
      }
    });

const DevelopmentIndicatorOutputSchema = () =>
  z.object({
    country: z.string().describe('The country code that was queried, upper-cased.'),
    indicator: z.string().describe('The indicator code that was queried.'),
    indicatorName: z.string().describe('Human-readable indicator name, e.g. "GDP (current US$)".'),
    count: z.number().int().describe('Number of entries in `series`.'),
    series: z
      .array(
        z.object({
          year: z.number().int().describe('Calendar year of the observation.'),
          value: z.number().describe('Observed value, in the unit named by `indicatorName`.'),
        }),
      )
      .describe('Observations, oldest year first; years without an observation are left out.'),
  });

/** Fetches the series; years whose upstream value is null are left out, and an all-empty range is a 404. */
async function fetchSeries(input: z.output<ReturnType<typeof DevelopmentIndicatorInputSchema>>, ctx: ToolContext) {
  const provider = ctx.providers.worldbank;
  const { data } = await provider.series(input, ctx.signal);
  if (data.observations.length === 0 || data.indicatorName === null) {
    throw new ToolError(
      'not_found',
      `The ${provider.source} has no observation of ${input.indicator} for ${input.country} between ${input.startYear} and ${input.endYear}. ` +
        'Try a wider year range or another indicator.',
    );
  }
  const series = data.observations;
  return {
    country: input.country,
    indicator: input.indicator,
    indicatorName: data.indicatorName,
    count: series.length,
    series,
  };
}

/** Yearly development-statistics series (GDP, population, …) for one country and indicator. */
export const developmentIndicator = defineTool({
  name: 'development-indicator',
  title: 'Development indicator series',
  description:
    'Returns a yearly series of an open development statistic for one country, e.g. GDP (NY.GDP.MKTP.CD), ' +
    'population (SP.POP.TOTL) or inflation (FP.CPI.TOTL.ZG), with the indicator name. Query parameters: ' +
    '`country` (ISO-2 or ISO-3), `indicator` (code), `startYear` (default 2018) and `endYear` (default 2023). ' +
    'Years without an observation are left out. An unknown indicator or a range without any observation is ' +
    'answered 404, an unknown country code 400, neither charged.',
  group: 'tools',
  method: 'GET',
  path: '/api/development-indicator',
  input: DevelopmentIndicatorInputSchema,
  output: DevelopmentIndicatorOutputSchema,
  pricing: { usd: '0.01', accepts: 'every-network' },
  example: { country: 'BR', indicator: 'NY.GDP.MKTP.CD', startYear: 2018, endYear: 2023 },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  handler: fetchSeries,
});
