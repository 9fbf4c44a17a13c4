import {
  startLookalikeServer,
  type HandlerMode,
  type Lookalike,
  type LookalikeOptions,
  type LookalikeReply,
} from './server.js';

/**
 * A look-alike of the World Bank Indicators API v2 (/work/shared/docs/upstream-apis.md §4, §13):
 * `GET /country/{iso}/indicator/{code}?format=json&date=A:B&per_page=N&page=P` answers the 2-element array
 * `[meta, rows]` with rows newest year first and `value` null where there is no observation, `[meta, null]` for a
 * range without rows, and — all with HTTP 200 — the one-element `message` arrays: 120 for an unknown country,
 * 175 for an unknown or archived indicator. ISO-2 and ISO-3 codes are accepted in any case; indicator codes are
 * case-sensitive; a `format` other than json gets the XML error envelope.
 * Handler failure modes: `error200` = a 105 message (service unavailable), `empty` = `[meta, null]`,
 * `mismatch` = values as strings.
 */

/** A country (or aggregate) the look-alike knows. */
export interface WbCountry {
  iso2: string;
  iso3: string;
  name: string;
}

/** An indicator with its value generator (deterministic per country and year; null = no observation). */
export interface WbIndicator {
  name: string;
  value: (country: WbCountry, year: number) => number | null;
}

export const WB_COUNTRIES: WbCountry[] = [
  { iso2: 'BR', iso3: 'BRA', name: 'Brazil' },
  { iso2: 'US', iso3: 'USA', name: 'United States' },
  { iso2: 'DE', iso3: 'DEU', name: 'Germany' },
  { iso2: 'IN', iso3: 'IND', name: 'India' },
  { iso2: 'NG', iso3: 'NGA', name: 'Nigeria' },
  { iso2: '1W', iso3: 'WLD', name: 'World' },
];

const size: Record<string, number> = { BRA: 1.9, USA: 23, DEU: 4.1, IND: 3.2, NGA: 0.45, WLD: 100 };
const people: Record<string, number> = { BRA: 203, USA: 333, DEU: 83.8, IND: 1420, NGA: 218, WLD: 7950 };

/** Observations stop in 2023 (2024 rows exist with null values, as a not-yet-published year does upstream). */
const LAST_PUBLISHED = 2023;

export const WB_INDICATORS: Record<string, WbIndicator> = {
  'NY.GDP.MKTP.CD': {
    name: 'GDP (current US$)',
    value: (c, y) => (y > LAST_PUBLISHED ? null : Math.round(size[c.iso3]! * 1e12 * 1.035 ** (y - 2020) * 100) / 100),
  },
  'SP.POP.TOTL': {
    name: 'Population, total',
    value: (c, y) => (y > LAST_PUBLISHED ? null : Math.round(people[c.iso3]! * 1e6 * 1.009 ** (y - 2020))),
  },
  'FP.CPI.TOTL.ZG': {
    name: 'Inflation, consumer prices (annual %)',
    // Nigeria has a gap in 2020 and 2021 (null values inside the range).
    value: (c, y) =>
      y > LAST_PUBLISHED || (c.iso3 === 'NGA' && (y === 2020 || y === 2021))
        ? null
        : Math.round((2 + ((y * 7 + c.iso3.charCodeAt(0)) % 9) * 0.73) * 1e4) / 1e4,
  },
  'SI.POV.NAHC': {
    name: 'Poverty headcount ratio at national poverty lines (% of population)',
    // Only surveyed in a few years: most of a short range is empty.
    value: (c, y) => (y % 5 === 0 && y <= LAST_PUBLISHED ? 20 + (c.iso3.charCodeAt(1) % 10) : null),
  },
};

/** Indicators that exist in the catalogue but are archived: the data route answers 175, as upstream. */
export const WB_ARCHIVED = ['EN.ATM.CO2E.KT'];

const FIRST_YEAR = 1960;
const LATEST_ROW_YEAR = 2024;

const message = (id: string, key: string, value: string) => [{ message: [{ id, key, value }] }];

/** Options of the World Bank look-alike. */
export interface WorldBankLookalikeOptions extends LookalikeOptions {
  countries?: WbCountry[];
  indicators?: Record<string, WbIndicator>;
}

/** Starts the World Bank look-alike on 127.0.0.1. */
export function startWorldBankLookalike(options: WorldBankLookalikeOptions = {}): Promise<Lookalike> {
  const countries = options.countries ?? WB_COUNTRIES;
  const indicators = options.indicators ?? WB_INDICATORS;
  return startLookalikeServer((req, mode): LookalikeReply => {
    const match = /^\/country\/([^/]+)\/indicator\/([^/]+)$/.exec(req.path);
    if (req.method !== 'GET' || !match)
      return { json: message('120', 'Invalid value', 'The provided parameter value is not valid') };
    if (req.query.get('format') !== 'json') {
      return {
        text: '<?xml version="1.0" encoding="utf-8"?><wb:error xmlns:wb="http://www.worldbank.org"><wb:message id="120" key="Invalid value">The provided parameter value is not valid</wb:message></wb:error>',
        headers: { 'content-type': 'text/xml' },
      };
    }
    if (mode === 'error200')
      return {
        json: message('105', 'Service currently unavailable', 'The requested service is temporarily unavailable.'),
      };
    const iso = decodeURIComponent(match[1]!).toUpperCase();
    const code = decodeURIComponent(match[2]!);
    const country = countries.find((c) => c.iso2 === iso || c.iso3 === iso);
    if (!country) return { json: message('120', 'Invalid value', 'The provided parameter value is not valid') };
    const indicator = indicators[code];
    if (!indicator || WB_ARCHIVED.includes(code)) {
      return {
        json: [
          ...message('175', 'Invalid format', 'The indicator was not found. It may have been deleted or archived.'),
          null,
        ],
      };
    }
    return indicatorPage(req.query, mode, { code, indicator, country });
  }, options);
}

/** One page of an indicator's yearly rows for a country, as the API pages them (`date`, `per_page`, `page`). */
function indicatorPage(
  query: URLSearchParams,
  mode: HandlerMode | undefined,
  of: { code: string; indicator: WbIndicator; country: WbCountry },
): LookalikeReply {
  const { code, indicator, country } = of;
  const [from, to] = (query.get('date') ?? `${FIRST_YEAR}:${LATEST_ROW_YEAR}`).split(':').map(Number) as [
    number,
    number?,
  ];
  const last = Math.min(to ?? from, LATEST_ROW_YEAR);
  const perPage = Number(query.get('per_page') ?? 50);
  const page = Number(query.get('page') ?? 1);
  const years: number[] = [];
  for (let y = last; y >= Math.max(from, FIRST_YEAR); y--) years.push(y);
  const total = mode === 'empty' ? 0 : years.length;
  const pages = total === 0 ? 0 : Math.ceil(total / perPage);
  const meta = {
    page: total === 0 ? 0 : page,
    pages,
    per_page: perPage,
    total,
    sourceid: '2',
    lastupdated: '2025-07-01',
  };
  if (total === 0) return { json: [meta, null] };
  const rows = years.slice((page - 1) * perPage, page * perPage).map((year) => {
    const value = indicator.value(country, year);
    return {
      indicator: { id: code, value: indicator.name },
      country: { id: country.iso2, value: country.name },
      countryiso3code: country.iso3,
      date: String(year),
      value: mode === 'mismatch' && value !== null ? String(value) : value,
      unit: '',
      obs_status: '',
      decimal: code === 'FP.CPI.TOTL.ZG' ? 1 : 0,
    };
  });
  return { json: [meta, rows] };
}
