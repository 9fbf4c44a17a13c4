import { z } from 'zod';
import { ToolError } from '../../shared/errors.js';
import type { Fetched, Upstream } from '../upstream.js';

/** Kalshi's web site; market pages live under `/markets/{series}/{event}` (lower case). */
export const KALSHI_WEB_URL = 'https://kalshi.com';

/** Venue name shown on every market. */
export const KALSHI_VENUE = 'Kalshi';

/**
 * A fixed-point decimal string (`"0.5600"` dollars, `"4918.41"` contracts) read as a number. These replaced the
 * integer-cent and integer-count fields, which the venue removed on 2026-03-12 and which we never read.
 */
const fixedPoint = z
  .string()
  .trim()
  .regex(/^-?\d+(\.\d+)?$/, 'must be a fixed-point decimal string')
  .transform(Number);

const MarketSchema = z.object({
  ticker: z.string().min(1),
  event_ticker: z.string().optional(),
  // Kalshi marks a market's `title` deprecated and optional; `yes_sub_title` names the outcome.
  title: z.string().nullish(),
  yes_sub_title: z.string().nullish(),
  status: z.string(),
  yes_bid_dollars: fixedPoint,
  yes_ask_dollars: fixedPoint,
  no_bid_dollars: fixedPoint,
  no_ask_dollars: fixedPoint,
  last_price_dollars: fixedPoint,
  volume_fp: fixedPoint,
  open_interest_fp: fixedPoint,
});

const EventSchema = z.object({
  event_ticker: z.string().min(1),
  series_ticker: z.string().min(1),
  title: z.string(),
  sub_title: z.string().nullable().optional(),
  category: z.string().nullable().optional(),
  mutually_exclusive: z.boolean(),
  markets: z.array(MarketSchema).optional(),
});

/** One market with its quotes in dollars (0–1) and counts in contracts. */
export interface VenueMarket {
  ticker: string;
  eventTicker: string;
  title: string;
  venue: string;
  status: string;
  yesBid: number;
  yesAsk: number;
  noBid: number;
  noAsk: number;
  lastPrice: number;
  volume: number;
  openInterest: number;
  venueUrl: string;
}

/** An event with its markets, mapped to the tool's field names. */
export interface VenueEvent {
  eventTicker: string;
  title: string;
  subTitle: string;
  seriesTicker: string;
  category: string;
  mutuallyExclusive: boolean;
  markets: VenueMarket[];
}

/** The web page of an event (its markets are listed there), lower-cased as the venue's own links are. */
export function eventUrl(seriesTicker: string, eventTicker: string): string {
  return `${KALSHI_WEB_URL}/markets/${encodeURIComponent(seriesTicker.toLowerCase())}/${encodeURIComponent(eventTicker.toLowerCase())}`;
}

/** `GET /events/{ticker}?with_nested_markets=true`: markets from `event.markets`, else the deprecated top-level `markets`. */
const EventResponseSchema = z
  .object({ event: EventSchema, markets: z.array(MarketSchema).nullable().optional() })
  .transform(({ event, markets }): VenueEvent => {
    const url = eventUrl(event.series_ticker, event.event_ticker);
    return {
      eventTicker: event.event_ticker,
      title: event.title,
      subTitle: event.sub_title ?? '',
      seriesTicker: event.series_ticker,
      category: event.category ?? '',
      mutuallyExclusive: event.mutually_exclusive,
      markets: (event.markets ?? markets ?? []).map((m) => ({
        ticker: m.ticker,
        eventTicker: m.event_ticker ?? event.event_ticker,
        title: m.title ?? m.yes_sub_title ?? '',
        venue: KALSHI_VENUE,
        status: m.status,
        yesBid: m.yes_bid_dollars,
        yesAsk: m.yes_ask_dollars,
        noBid: m.no_bid_dollars,
        noAsk: m.no_ask_dollars,
        lastPrice: m.last_price_dollars,
        volume: m.volume_fp,
        openInterest: m.open_interest_fp,
        venueUrl: url,
      })),
    };
  });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Prediction-market events from the Kalshi Trade API v2 (public market data, no key). */
export interface KalshiProvider {
  /** Name of the upstream, for `source` fields. */
  readonly source: string;
  /** One event with its nested markets (cached for the upstream's TTL); an unknown ticker is a not_found ToolError. */
  event(eventTicker: string, signal?: AbortSignal): Promise<Fetched<VenueEvent>>;
}

/** Creates the Kalshi provider on its upstream client. */
export function createKalshiProvider(upstream: Upstream): KalshiProvider {
  const label = upstream.info.label;
  return {
    source: label,
    event(eventTicker, signal) {
      return upstream.request({
        path: `/events/${encodeURIComponent(eventTicker)}`,
        query: { with_nested_markets: 'true' },
        schema: EventResponseSchema,
        interpret: (status, json) => {
          if (status === 404) {
            return new ToolError(
              'not_found',
              `The ${label} has no event "${eventTicker}". Check the event ticker (upper case, e.g. KXFEDDECISION-25DEC; a market ticker is not an event ticker).`,
              { field: 'eventTicker' },
            );
          }
          if (status === 400) {
            return new ToolError(
              'invalid_input',
              `The ${label} does not accept "${eventTicker}" as an event ticker. Check it and call again.`,
              {
                field: 'eventTicker',
              },
            );
          }
          // The venue's error envelope `{"error": {...}}` arriving with a 2xx status is a failure, not an event.
          if (status >= 200 && status < 300 && isObject(json) && 'error' in json && !('event' in json)) {
            const error = json.error;
            const message =
              isObject(error) && typeof error.message === 'string'
                ? error.message
                : typeof error === 'string'
                  ? error
                  : 'an error';
            return new ToolError(
              'upstream_unavailable',
              `The ${label} answered with ${message.slice(0, 120)}. Try again in a minute.`,
            );
          }
          return undefined;
        },
        ...(signal ? { signal } : {}),
      });
    },
  };
}
