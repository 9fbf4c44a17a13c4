import { z } from 'zod';
import { ToolError } from '../src/shared/errors.js';
import { defineTool, type ToolContext } from '../src/tool/tool.js';

const VenueEventInputSchema = () =>
  z.object({
    eventTicker: z
      .string()
      .trim()
      .min(1)
      .max(64)
      .regex(
        /^[A-Za-z0-9._-]+$/,
        'must be an event ticker of letters, digits, "-", "_" and "." (e.g. KXFEDDECISION-25DEC)',
      )
      .toUpperCase()
      .describe(
        'Prediction-market event ticker, e.g. `KXFEDDECISION-25DEC`; 1–64 characters of letters, digits, ' +
          '`-`, `_` and `.`. Tickers are upper case at the venue, so lower case is upper-cased for you.',
      ),
  });

const PriceSchema = () => z.number().describe('Price in dollars per contract, 0–1 (0.56 ≙ 56 % implied probability).');

const MarketSchema = () =>
  z.object({
    ticker: z.string().describe('Market ticker.'),
    eventTicker: z.string().describe('Ticker of the event the market belongs to.'),
    title: z
      .string()
      .describe(
        'Market title; the venue may leave it out (Kalshi deprecates it): then its YES outcome name, else empty.',
      ),
    venue: z.string().describe('Name of the prediction-market venue.'),
    status: z.string().describe('Market status, e.g. `active`, `closed`, `determined`, `finalized`.'),
    yesBid: PriceSchema(),
    yesAsk: PriceSchema(),
    noBid: PriceSchema(),
    noAsk: PriceSchema(),
    lastPrice: PriceSchema().describe('Last traded YES price in dollars, 0–1.'),
    volume: z.number().describe('Contracts traded over the market lifetime (may be fractional).'),
    openInterest: z.number().describe('Contracts currently open (may be fractional).'),
    venueUrl: z.string().describe('Web page at the venue where the market is traded (its event page).'),
  });

const VenueEventOutputSchema = () =>
  z.object({
    eventTicker: z.string(),
    title: z.string(),
    subTitle: z.string(),
    seriesTicker: z.string().describe('Ticker of the recurring series the event belongs to.'),
    category: z.string(),
    mutuallyExclusive: z
      .boolean()
      .describe('True when the markets partition the outcome space (exactly one resolves YES).'),
    marketCount: z.number().int().describe('Number of entries in `markets`.'),
    markets: z.array(MarketSchema()).describe('Markets of the event with current quotes.'),
    source: z.string().describe('Name of the upstream data source.'),
  });

/** Fetches the event with its nested markets; prices and counts arrive as fixed-point strings and leave as numbers. */
async function lookUpEvent(input: z.output<ReturnType<typeof VenueEventInputSchema>>, ctx: ToolContext) {
  const provider = ctx.providers.kalshi;
  const { data: event } = await provider.event(input.eventTicker, ctx.signal);
  if (event.markets.length === 0) {
    throw new ToolError(
      'not_found',
      `The ${provider.source} lists event ${event.eventTicker} ("${event.title}") without any market to quote. Try again later or another event.`,
      { field: 'eventTicker' },
    );
  }
  return { ...event, marketCount: event.markets.length, source: provider.source };
}

/** A prediction-market event with all its markets, quotes, volume and open interest. */
export const venueEvent = defineTool({
  name: 'venue-event',
  title: 'Prediction-market event',
  description:
    'Looks up a prediction-market event by its ticker and returns its title, category, whether its markets ' +
    'are mutually exclusive, and every market with YES/NO bid and ask, last price (dollars 0–1, i.e. implied ' +
    'probability), volume, open interest, status and a link. An unknown ticker is answered 404 and not charged.',
  group: 'tools',
  method: 'POST',
  path: '/api/venue-event',
  input: VenueEventInputSchema,
  output: VenueEventOutputSchema,
  pricing: { usd: '0.002', accepts: 'every-network' },
  example: { eventTicker: 'KXFEDDECISION-25DEC' },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  handler: lookUpEvent,
});
