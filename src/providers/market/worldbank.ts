import { z } from 'zod';
import { ToolError } from '../../shared/errors.js';
import type { Fetched, Upstream } from '../upstream.js';

/** Rows asked for in one page: more than the 141 years a query can span, so one page always holds the series. */
const PER_PAGE = 1000;

/** Page numbers come back as numbers on this route and as strings on others; read both. */
const count = z.union([z.number(), z.string().regex(/^\d+$/).transform(Number)]);

const MetaSchema = z.object({
  page: count,
  pages: count,
  per_page: count,
  total: count,
  lastupdated: z.string().nullable().optional(),
});

const RowSchema = z.object({
  indicator: z.object({ id: z.string(), value: z.string() }),
  country: z.object({ id: z.string(), value: z.string() }),
  countryiso3code: z.string().optional(),
  date: z.string(),
  value: z.number().nullable(),
});

/** One observation: a calendar year and its value. */
export interface Observation {
  year: number;
  value: number;
}

/** A yearly series as the tool returns it. */
export interface IndicatorSeries {
  /** The indicator's name, or null when the upstream sent no row to read it from. */
  indicatorName: string | null;
  countryName: string | null;
  /** Observations oldest first; years whose value is null (no observation) are left out. */
  observations: Observation[];
  /** Rows the upstream sent for the range, null values included. */
  rows: number;
  lastUpdated: string | null;
}

/** `[meta, rows | null]` (rows newest first), normalised to an oldest-first series without nulls. */
const SeriesResponseSchema = z
  .tuple([MetaSchema, z.array(RowSchema).nullable()])
  .rest(z.unknown())
  .transform(([meta, rows]): IndicatorSeries => {
    const list = rows ?? [];
    const observations = list
      .filter((r): r is typeof r & { value: number } => r.value !== null && /^\d{4}$/.test(r.date))
      .map((r) => ({ year: Number(r.date), value: r.value }))
      .sort((a, b) => a.year - b.year);
    return {
      indicatorName: list[0]?.indicator.value ?? null,
      countryName: list[0]?.country.value ?? null,
      observations,
      rows: list.length,
      lastUpdated: meta.lastupdated ?? null,
    };
  });

const MessageSchema = z.object({
  id: z.union([z.string(), z.number()]).transform(String),
  key: z.string().optional(),
  value: z.string().optional(),
});

/** The World Bank's error form: HTTP 200 with `[{"message":[{id, key, value}]}]` (sometimes followed by `null`). */
export function messageOf(json: unknown): z.output<typeof MessageSchema> | undefined {
  if (!Array.isArray(json)) return undefined;
  const first: unknown = json[0];
  if (typeof first !== 'object' || first === null || !('message' in first)) return undefined;
  const messages = z.array(MessageSchema).safeParse((first as { message: unknown }).message);
  if (!messages.success) return { id: 'unknown', value: 'an error in an unrecognised form' };
  return messages.data[0] ?? { id: 'unknown', value: 'an empty error message' };
}

/** Parameters of one series request (already validated and upper-cased by the tool's input schema). */
export interface SeriesQuery {
  country: string;
  indicator: string;
  startYear: number;
  endYear: number;
}

/** Yearly development indicators from the World Bank Indicators API v2. */
export interface WorldBankProvider {
  /** Name of the upstream, for `source` fields. */
  readonly source: string;
  /** One country's series for one indicator over a year range (cached for the upstream's TTL). */
  series(query: SeriesQuery, signal?: AbortSignal): Promise<Fetched<IndicatorSeries>>;
}

/** Maps the upstream's HTTP-200 error messages: 120 (invalid value: the country) → 400, 175 (unknown indicator) → 404. */
function interpretMessage(label: string, query: SeriesQuery, json: unknown): ToolError | undefined {
  const message = messageOf(json);
  if (!message) return undefined;
  switch (message.id) {
    case '120':
      return new ToolError(
        'invalid_input',
        `The ${label} does not know the country code "${query.country}". Use an ISO 3166 alpha-2 or alpha-3 code such as BR or BRA (aggregates such as WLD also work).`,
        { field: 'country' },
      );
    case '175':
      return new ToolError(
        'not_found',
        `The ${label} has no indicator "${query.indicator}" (it may be misspelt, archived or deleted; codes are case-sensitive, e.g. NY.GDP.MKTP.CD).`,
        { field: 'indicator' },
      );
    default:
      return new ToolError(
        'upstream_unavailable',
        `The ${label} answered with error ${message.id}${message.value ? ` ("${message.value.slice(0, 120)}")` : ''}. Try again later.`,
      );
  }
}

/** Creates the World Bank provider on its upstream client. */
export function createWorldBankProvider(upstream: Upstream): WorldBankProvider {
  const label = upstream.info.label;
  return {
    source: label,
    series(query, signal) {
      return upstream.request({
        path: `/country/${encodeURIComponent(query.country)}/indicator/${encodeURIComponent(query.indicator)}`,
        query: { format: 'json', date: `${query.startYear}:${query.endYear}`, per_page: PER_PAGE },
        schema: SeriesResponseSchema,
        interpret: (status, json) => (status === 200 ? interpretMessage(label, query, json) : undefined),
        ...(signal ? { signal } : {}),
      });
    },
  };
}
