import { z } from 'zod';
import { UsageError, type CliCommand } from './command.js';
import { MaxUsd } from './call.js';

/** The values of `fetch`'s options. */
const FetchValues = z.object({
  method: z.string().optional(),
  header: z.array(z.string()).default([]),
  data: z.string().optional(),
  output: z.string().optional(),
  'max-usd': MaxUsd,
  'expect-price': z
    .string()
    .optional()
    .transform((text, ctx) => {
      const dollars = text === undefined ? undefined : Number(text.replace(/^\$/, ''));
      if (dollars === undefined || (Number.isFinite(dollars) && dollars >= 0)) return dollars;
      ctx.addIssue({ code: 'custom', message: '--expect-price must be a non-negative number of dollars, e.g. 0.01' });
      return z.NEVER;
    }),
  'dry-run': z.boolean().default(false),
  full: z.boolean().default(false),
  yes: z.boolean().default(false),
});

/** `-H 'Name: value'` lines as headers with lower-case names. */
function readHeaders(lines: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon).trim().toLowerCase() : '';
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name)) throw new UsageError(`--header "${line}": write it as 'Name: value'`);
    headers[name] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** The URL to fetch, checked: http or https only. */
export function fetchUrlOf(text: string | undefined): string {
  if (!text) throw new UsageError('name the URL to fetch');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`"${text}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('the URL must be http or https');
  return url.href;
}

/** `tollbooth fetch <url>`: a curl-like request to any x402 or MPP seller, paid from the user's wallet under the budget. */
export const fetchCommand: CliCommand<z.output<typeof FetchValues>> = {
  usage: `tollbooth fetch <url> [-X <method>] [-H 'Name: value']... [-d <body>] [-o <file>] [--max-usd <dollars>] [--expect-price <dollars>] [--dry-run [--full]] [--yes]

  Sends one request to any seller that charges with x402 (version 1 or 2) or MPP; when it answers 402, chooses an
  option and pays it from the configured wallet (WALLET_*) under the budget (BUDGET_*), with the same ledger as
  tollbooth call and stdio --remote (a lost answer is re-sent, not paid twice). stdout: the seller's body; stderr: the receipt.
  Exit: 0 done, 1 failed (remote error, payment refused or pending), 2 usage, 3 not paid (budget, approval, no wallet).

  --method, -X <method>    the HTTP method (default GET, or POST with --data)
  --header, -H <line>      a request header, 'Name: value' (repeatable)
  --data, -d <body>        the request body, sent as it is (content-type application/json unless -H says otherwise)
  --output, -o <file>      write the body to this file instead of stdout
  --max-usd <dollars>      per-call cap for this request, instead of BUDGET_MAX_USD_PER_CALL
  --expect-price <dollars> refuse (without paying) a price more than AGENT_PRICE_DRIFT (10%) above this
  --dry-run                show the price and the option that would be paid; pay nothing
  --full                   with --dry-run: the full report (every option and the whole challenge) as JSON
  --yes, -y                approve a payment above BUDGET_ASK_ABOVE_USD, or to a seller's changed pay-to, without asking`,
  options: {
    method: { type: 'string', short: 'X' },
    header: { type: 'string', short: 'H', multiple: true },
    data: { type: 'string', short: 'd' },
    output: { type: 'string', short: 'o' },
    'max-usd': { type: 'string' },
    'expect-price': { type: 'string' },
    'dry-run': { type: 'boolean' },
    full: { type: 'boolean' },
    yes: { type: 'boolean', short: 'y' },
  },
  positionals: 1,
  values: FetchValues,
  async run(args) {
    const url = fetchUrlOf(args.positionals[0]);
    const { values } = args;
    if (values.full && !values['dry-run']) throw new UsageError('--full goes with --dry-run');
    const method = (values.method ?? (values.data !== undefined ? 'POST' : 'GET')).toUpperCase();
    if (!/^[A-Z]+$/.test(method)) throw new UsageError(`--method "${values.method}" is not an HTTP method`);
    if ((method === 'GET' || method === 'HEAD') && values.data !== undefined)
      throw new UsageError(`--data cannot go with ${method}: use -X POST (or another method that takes a body)`);
    const maxUsd = values['max-usd'];
    const [{ runFetch }, { openStore }] = await Promise.all([
      import('../agent/cli-fetch.js'),
      import('../store/open.js'),
    ]);
    return runFetch(
      {
        url,
        method,
        headers: readHeaders(values.header),
        ...(values.data !== undefined ? { body: values.data } : {}),
        ...(values.output !== undefined ? { output: values.output } : {}),
        ...(maxUsd !== undefined ? { maxUsd } : {}),
        ...(values['expect-price'] !== undefined ? { expectUsd: values['expect-price'] } : {}),
        dryRun: values['dry-run'],
        full: values.full,
        yes: values.yes,
      },
      openStore,
    );
  },
};
