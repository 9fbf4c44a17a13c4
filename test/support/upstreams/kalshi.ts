import { startLookalikeServer, type Lookalike, type LookalikeOptions, type LookalikeReply } from './server.js';

/**
 * A look-alike of the Kalshi Trade API v2 Get Event route (/work/shared/docs/upstream-apis.md §5, §13):
 * `GET /events/{event_ticker}?with_nested_markets=true` answers `{event: {..., markets: [...]}, markets: []}` with
 * market prices only as fixed-point dollar strings (`yes_bid_dollars: "0.5600"`) and counts as `_fp` strings — the
 * integer-cent fields removed on 2026-03-12 are absent. Without `with_nested_markets=true` the markets come back in
 * the deprecated top-level `markets` array instead. Tickers are case-sensitive: an unknown or lower-cased ticker is
 * HTTP 404 with the `{"error":{code,message,service}}` envelope; 429 answers `{"error":"too many requests"}`.
 * Handler failure modes: `error200` = the error envelope with HTTP 200, `empty` = an event without markets,
 * `mismatch` = the legacy integer-cent market shape (no `_dollars`/`_fp` fields).
 */

/** A fixture market, compactly: quotes in dollars, counts in contracts. */
export interface MarketSpec {
  ticker: string;
  /** Left out of the answer when undefined (Kalshi marks a market's title deprecated and optional). */
  title?: string;
  yesSubTitle: string;
  status: string;
  yesBid: string;
  yesAsk: string;
  lastPrice: string;
  volume: string;
  openInterest: string;
  result?: string;
}

/** A fixture event. */
export interface EventSpec {
  event_ticker: string;
  series_ticker: string;
  title: string;
  sub_title: string;
  category: string;
  mutually_exclusive: boolean;
  markets: MarketSpec[];
}

export const KALSHI_FIXTURE: EventSpec[] = [
  {
    event_ticker: 'KXFEDDECISION-25DEC',
    series_ticker: 'KXFEDDECISION',
    title: 'Fed decision in Dec 2025?',
    sub_title: 'On Dec 10, 2025',
    category: 'Economics',
    mutually_exclusive: true,
    markets: [
      {
        ticker: 'KXFEDDECISION-25DEC-C25',
        title: 'Will the Fed cut rates by 25bps?',
        yesSubTitle: 'Cut 25bps',
        status: 'active',
        yesBid: '0.8700',
        yesAsk: '0.8800',
        lastPrice: '0.8700',
        volume: '1520344.00',
        openInterest: '604211.50',
      },
      {
        ticker: 'KXFEDDECISION-25DEC-H0',
        title: 'Will the Fed hold rates?',
        yesSubTitle: 'Hold',
        status: 'active',
        yesBid: '0.1100',
        yesAsk: '0.1200',
        lastPrice: '0.1150',
        volume: '980112.37',
        openInterest: '401877.00',
      },
      {
        ticker: 'KXFEDDECISION-25DEC-C26',
        title: 'Will the Fed cut rates by more than 25bps?',
        yesSubTitle: 'Cut >25bps',
        status: 'active',
        yesBid: '0.0100',
        yesAsk: '0.0200',
        lastPrice: '0.0100',
        volume: '120500.00',
        openInterest: '88010.25',
      },
      {
        ticker: 'KXFEDDECISION-25DEC-H25',
        title: 'Will the Fed hike rates?',
        yesSubTitle: 'Hike',
        status: 'active',
        yesBid: '0.0000',
        yesAsk: '0.0100',
        lastPrice: '0.0050',
        volume: '40211.00',
        openInterest: '20500.00',
      },
    ],
  },
  {
    event_ticker: 'KXSPACEXSTARSHIP-12',
    series_ticker: 'KXSPACEXSTARSHIP',
    title: 'When will SpaceX launch Starship flight 12?',
    sub_title: 'Before June',
    category: 'Science and Technology',
    mutually_exclusive: false,
    markets: [
      {
        ticker: 'KXSPACEXSTARSHIP-12-26MAY19',
        title: 'Will SpaceX launch another Starship by May 19, 2026?',
        yesSubTitle: 'Before May 20',
        status: 'active',
        yesBid: '0.6000',
        yesAsk: '0.6700',
        lastPrice: '0.6000',
        volume: '4918.41',
        openInterest: '3877.56',
      },
      {
        ticker: 'KXSPACEXSTARSHIP-12-26APR30',
        title: 'Will SpaceX launch another Starship by Apr 30, 2026?',
        yesSubTitle: 'Before May 1',
        status: 'finalized',
        yesBid: '0.0000',
        yesAsk: '0.0000',
        lastPrice: '0.0100',
        volume: '15820.00',
        openInterest: '0.00',
        result: 'no',
      },
    ],
  },
  {
    event_ticker: 'KXTITLELESS-26',
    series_ticker: 'KXTITLELESS',
    title: 'Which team wins the 2026 final?',
    sub_title: 'Markets without the deprecated title',
    category: 'Sports',
    mutually_exclusive: true,
    markets: [
      {
        ticker: 'KXTITLELESS-26-A',
        yesSubTitle: 'Team A',
        status: 'active',
        yesBid: '0.4000',
        yesAsk: '0.4200',
        lastPrice: '0.4100',
        volume: '100.00',
        openInterest: '50.00',
      },
      {
        ticker: 'KXTITLELESS-26-B',
        title: 'Will Team B win the 2026 final?',
        yesSubTitle: 'Team B',
        status: 'active',
        yesBid: '0.5500',
        yesAsk: '0.5800',
        lastPrice: '0.5600',
        volume: '200.00',
        openInterest: '80.00',
      },
    ],
  },
];

function market(event: EventSpec, m: MarketSpec): Record<string, unknown> {
  const no = (yes: string) => (1 - Number(yes)).toFixed(4);
  return {
    ticker: m.ticker,
    event_ticker: event.event_ticker,
    market_type: 'binary',
    ...(m.title === undefined ? {} : { title: m.title }),
    subtitle: event.sub_title,
    yes_sub_title: m.yesSubTitle,
    no_sub_title: m.yesSubTitle,
    status: m.status,
    yes_bid_dollars: m.yesBid,
    yes_ask_dollars: m.yesAsk,
    no_bid_dollars: no(m.yesAsk),
    no_ask_dollars: no(m.yesBid),
    last_price_dollars: m.lastPrice,
    previous_price_dollars: '0.0000',
    yes_bid_size_fp: '10.67',
    yes_ask_size_fp: '25.00',
    volume_fp: m.volume,
    volume_24h_fp: m.volume,
    open_interest_fp: m.openInterest,
    liquidity_dollars: '0.0000',
    notional_value_dollars: '1.0000',
    price_level_structure: 'linear_cent',
    price_ranges: [{ start: '0.0000', end: '1.0000', step: '0.0100' }],
    fractional_trading_enabled: true,
    open_time: '2026-05-13T02:30:00Z',
    close_time: '2026-05-20T03:59:00Z',
    expected_expiration_time: '2026-06-01T14:00:00Z',
    latest_expiration_time: '2026-05-26T14:00:00Z',
    result: m.result ?? '',
    can_close_early: true,
    rules_primary: `If ${m.yesSubTitle.toLowerCase()} happens, the market resolves to Yes.`,
    rules_secondary: '',
  };
}

/** The market as the API described it before 2026-03-12: integer cents and integer counts, no string forms. */
function legacyMarket(event: EventSpec, m: MarketSpec): Record<string, unknown> {
  const cents = (d: string) => Math.round(Number(d) * 100);
  return {
    ticker: m.ticker,
    event_ticker: event.event_ticker,
    title: m.title,
    status: m.status,
    yes_bid: cents(m.yesBid),
    yes_ask: cents(m.yesAsk),
    no_bid: 100 - cents(m.yesAsk),
    no_ask: 100 - cents(m.yesBid),
    last_price: cents(m.lastPrice),
    volume: Math.round(Number(m.volume)),
    open_interest: Math.round(Number(m.openInterest)),
  };
}

const notFound = { status: 404, json: { error: { code: 'not_found', message: 'not found', service: 'exchange' } } };

/** Options of the Kalshi look-alike. */
export interface KalshiLookalikeOptions extends LookalikeOptions {
  events?: EventSpec[];
}

/** Starts the Kalshi look-alike on 127.0.0.1. */
export function startKalshiLookalike(options: KalshiLookalikeOptions = {}): Promise<Lookalike> {
  const events = options.events ?? KALSHI_FIXTURE;
  return startLookalikeServer((req, mode): LookalikeReply => {
    const match = /^\/events\/([^/]+)$/.exec(req.path);
    if (req.method !== 'GET' || !match) return notFound;
    if (mode === 'error200')
      return {
        json: { error: { code: 'internal_server_error', message: 'internal server error', service: 'exchange' } },
      };
    const ticker = decodeURIComponent(match[1]!);
    const event = events.find((e) => e.event_ticker === ticker);
    if (!event) return notFound;
    const markets =
      mode === 'empty'
        ? []
        : event.markets.map((m) => (mode === 'mismatch' ? legacyMarket(event, m) : market(event, m)));
    const { markets: _specs, ...fields } = event;
    const body = {
      ...fields,
      collateral_return_type: event.mutually_exclusive ? 'MECNET' : 'binary',
      available_on_brokers: true,
      product_metadata: {},
      strike_date: null,
      strike_period: '',
    };
    const nested = req.query.get('with_nested_markets') === 'true';
    return { json: nested ? { event: { ...body, markets }, markets: [] } : { event: body, markets } };
  }, options);
}
