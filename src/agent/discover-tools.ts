/**
 * The agent's free local tools for finding and trying services in remote mode: `search_services` (the discovery
 * indexes of AGENT_DISCOVERY_URLS), `check_price` (a dry run of one URL: the option and price, nothing paid) and
 * `fetch_paid` (one request to any x402 or MPP seller, paid under the budget, like `tollbooth fetch`).
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { inputError } from '../shared/input-error.js';
import { portableSchema } from '../shared/mcp-wire.js';
import type { RemoteCaller } from './caller.js';
import { searchServices, type DiscoverDeps } from './discover.js';
import { dryRunSummary } from './dry-run-summary.js';
import type { CallOutcome } from './outcome.js';
import type { RemoteRequest } from './remote.js';

const SearchInput = z.object({
  query: z.string().max(200).describe('Words every result must hold in its name, description or URL.'),
});
const HttpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:/i.test(u), 'must be http or https');
const CheckInput = z.object({
  url: HttpUrl,
  method: z
    .string()
    .regex(/^[A-Za-z]+$/)
    .default('GET'),
});
const FetchInput = CheckInput.extend({
  headers: z.record(z.string(), z.string()).default({}),
  body: z.string().max(1_000_000).optional(),
});

/** Largest seller body `fetch_paid` returns, in characters. */
export const FETCH_BODY_CAP = 100_000;

const schema = (type: z.ZodType) =>
  portableSchema(
    z.toJSONSchema(type, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>,
  ) as Tool['inputSchema'];

/** The tools/list entries of the discovery tools. */
export const DISCOVER_TOOLS: readonly Tool[] = [
  {
    name: 'search_services',
    description:
      'Free and local: searches the discovery indexes (AGENT_DISCOVERY_URLS) for paid HTTP services whose name, description or URL hold the query words; returns name, description, URL, origin, networks and price range in US dollars.',
    inputSchema: schema(SearchInput),
    annotations: { readOnlyHint: true, openWorldHint: true },
  },
  {
    name: 'check_price',
    description:
      'Free: asks a URL its price without paying (a dry run): the option the agent would pay, its price in US dollars and the budget left.',
    inputSchema: schema(CheckInput),
    annotations: { readOnlyHint: true, openWorldHint: true },
  },
  {
    name: 'fetch_paid',
    description:
      "Sends one HTTP request to any x402 or MPP seller and pays its price from the agent's wallet under the budget; returns the status, the body (capped) and the receipt.",
    inputSchema: schema(FetchInput),
    annotations: { readOnlyHint: false, openWorldHint: true },
  },
];

/** What the discovery tools use. */
export interface DiscoverToolDeps extends DiscoverDeps {
  caller: RemoteCaller;
  /** The indexes to search (AGENT_DISCOVERY_URLS). */
  indexes: readonly string[];
}

function structured(output: Record<string, unknown>, isError = false): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(output) }],
    structuredContent: output,
    ...(isError ? { isError } : {}),
  };
}

const capped = (body: unknown): string => {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return text.length > FETCH_BODY_CAP ? text.slice(0, FETCH_BODY_CAP) : text;
};

/** A fetch outcome as the tool's answer: status, body text (capped), receipt and payment. */
function fetchAnswer(outcome: CallOutcome): CallToolResult {
  switch (outcome.type) {
    case 'success':
      return structured({
        status: 200,
        body: capped(outcome.output),
        ...(outcome.receipt ? { receipt: outcome.receipt } : {}),
        ...(outcome.payment ? { payment: outcome.payment } : {}),
      });
    case 'remote_error':
      return structured({ status: outcome.status, body: capped(outcome.body) }, true);
    case 'refused':
      return structured(
        { error: outcome.error.toBody(), ...(outcome.payment ? { payment: outcome.payment } : {}) },
        true,
      );
    case 'payment_required':
      return structured({ error: { code: 'payment_required', message: outcome.hint } }, true);
    case 'dry_run':
      return structured({
        ...dryRunSummary(outcome.report),
        ...(outcome.report.chosen ? { price: outcome.report.chosen.usd, option: outcome.report.chosen } : {}),
      });
  }
}

/** Runs one discovery tool by name; `approve` asks the user about a payment above the approval threshold. */
export async function callDiscoverTool(
  deps: DiscoverToolDeps,
  name: string,
  args: unknown,
  session: { signal: AbortSignal; approve: (question: string) => Promise<'accepted' | 'declined' | 'unavailable'> },
): Promise<CallToolResult> {
  const bad = (error: z.ZodError): CallToolResult => ({
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(inputError(error).toBody()) }],
  });
  if (name === 'search_services') {
    const parsed = SearchInput.safeParse(args ?? {});
    if (!parsed.success) return bad(parsed.error);
    const words = parsed.data.query.split(/\s+/).filter(Boolean);
    return structured(await searchServices(deps.indexes, words, deps));
  }
  const parsed = FetchInput.safeParse(args ?? {});
  if (!parsed.success) return bad(parsed.error);
  const { url, headers, body } = parsed.data;
  const request: RemoteRequest = {
    url,
    method: parsed.data.method.toUpperCase(),
    headers: { accept: '*/*', ...Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])) },
    ...(body !== undefined ? { body } : {}),
  };
  const dryRun = name === 'check_price';
  const outcome = await deps.caller.fetchUrl(request, { signal: session.signal, approve: session.approve, dryRun });
  return fetchAnswer(outcome);
}
