/**
 * Tool calls to a remote MCP endpoint (a remote base URL whose path ends in `/mcp`): the same answers as over HTTP
 * (`RemoteAnswer`), read from tool results. A payment travels in `_meta`: x402 in `_meta["x402/payment"]`, MPP in
 * `_meta["org.paymentauth/credential"]` (the MPP MCP binding); an unpaid result offers x402 in `structuredContent` and
 * MPP in `_meta["org.paymentauth/payment-required"]` (or as a JSON-RPC -32042 error). One client per endpoint, held
 * by the agent's `McpRemotes`.
 * Two earlier dialects are spoken too: Vercel's `x402-mcp` (`_meta["x402.payment"]`, a base64 string) and Cloudflare's
 * `agents` (x402 offered only in `_meta["x402/error"]`, `_meta["x402/payment"]` read as a base64 string).
 */
import type { JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { SettleResponse } from '@x402/core/types';
import { z } from 'zod';
import { ERROR_CODES } from '../shared/errors.js';
import { readChallenge, type RemoteAnswer, type RemoteChallenge, type RemoteRequest } from './remote.js';
import { MPP_META, X402_META } from '../shared/mcp-wire.js';
import { offerOf, type MppChallenge, type MppCredential, type MppReceipt } from './mpp.js';

/** JSON-RPC codes of the MPP binding: payment required, payment verification failed. */
const MPP_ERROR_CODES = [-32042, -32043];
/** JSON-RPC codes of a request the remote refused as such: parse error, invalid request, unknown method, invalid params. */
const REQUEST_ERROR_CODES = [-32700, -32600, -32601, -32602];
/** The MCP SDK's codes for an answer that never came: connection closed, request timed out. */
const LOST_ANSWER_CODES = [-32000, -32001];

const ChallengeObject = z
  .object({
    id: z.string(),
    realm: z.string(),
    method: z.string(),
    intent: z.string(),
    request: z.record(z.string(), z.unknown()),
  })
  .passthrough();
const PaymentRequiredMeta = z.object({ challenges: z.array(ChallengeObject).min(1) }).passthrough();
/**
 * The keys of Vercel's `x402-mcp` (x402 version 1 over MCP, before the transport's `x402/…` keys): the payment as the
 * X-PAYMENT header's base64 string, and the receipt. A version 1 payment is sent under both keys.
 */
const X402_MCP_V1_META = { payment: 'x402.payment', paymentResponse: 'x402.payment-response' } as const;

/** Whether a remote base URL is an MCP endpoint (its path ends in `/mcp`). */
export function isMcpEndpoint(base: string): boolean {
  try {
    return /\/mcp\/?$/.test(new URL(base).pathname);
  } catch {
    return false;
  }
}

/** One remote MCP endpoint an agent talks to: its client (reconnected when lost) and what was learnt of it. */
interface McpRemote {
  url: string;
  client?: Promise<Client>;
  /**
   * It offered x402 only in `_meta["x402/error"]` (no structuredContent), as Cloudflare's `agents` x402 wrapper does:
   * it reads `_meta["x402/payment"]` only as a base64 string, so its payments are sent that way (kept across reconnects).
   */
  base64Payments: boolean;
}

/**
 * The remote's tool schemas are a seller's data, never compiled: left to itself the SDK client compiles every
 * `outputSchema` of `tools/list` with Ajv (generated code, and any `pattern` a seller writes). Results are passed on
 * to the host as the seller sent them; the host validates what it asked for.
 */
const SCHEMAS_NOT_COMPILED: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input) => ({ valid: true, data: input as T, errorMessage: undefined });
  },
};

async function connect(url: string, timeoutMs: number): Promise<Client> {
  const [{ Client }, { StreamableHTTPClientTransport }, { VERSION }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('../shared/version.js'),
  ]);
  const client = new Client(
    { name: 'tollbooth-agent', version: VERSION },
    { jsonSchemaValidator: SCHEMAS_NOT_COMPILED },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)), { timeout: timeoutMs });
  return client;
}

function clientOf(remote: McpRemote, timeoutMs: number): Promise<Client> {
  if (!remote.client) {
    const client = connect(remote.url, timeoutMs);
    remote.client = client;
    client.catch(() => {
      if (remote.client === client) delete remote.client;
    });
  }
  return remote.client;
}

/** A tools/call on a remote: the request, its time limit, its cancel signal, the payment (if any), whether MPP is read. */
type CallArgs = [
  req: RemoteRequest & { mcp: { tool: string; args: unknown } },
  timeoutMs: number,
  signal: AbortSignal,
  payment: { protocol: 'x402'; payload: unknown } | MppCredential | undefined,
  readMpp: boolean,
];

/**
 * The remote MCP endpoints one agent talks to, by URL: one client each (reused by every listing and call, reconnected
 * after a failure) and what was learnt of each; created by whoever builds the agent, closed with it.
 */
export class McpRemotes {
  private readonly remotes = new Map<string, McpRemote>();

  /** The tools the endpoint at `url` lists (at most `max`, over at most 10 pages). */
  listTools(url: string, timeoutMs: number, max: number): Promise<Tool[]> {
    return listTools(this.remoteOf(url), timeoutMs, max);
  }

  /** Calls one tool of a remote MCP endpoint, with an optional payment, within `timeoutMs`; never throws for a network failure. */
  call(...args: CallArgs): Promise<RemoteAnswer> {
    return callTool(this.remoteOf(args[0].url), ...args);
  }

  /** Closes every connection opened so far and forgets the endpoints (a later call connects again). */
  async close(): Promise<void> {
    const open = [...this.remotes.values()].flatMap((r) => (r.client ? [r.client] : []));
    this.remotes.clear();
    await Promise.all(open.map(async (c) => (await c.catch(() => undefined))?.close().catch(() => undefined)));
  }

  private remoteOf(url: string): McpRemote {
    let remote = this.remotes.get(url);
    if (!remote) {
      remote = { url, base64Payments: false };
      this.remotes.set(url, remote);
    }
    return remote;
  }
}

/**
 * The tools a remote MCP endpoint lists (at most `max`, over at most 10 pages). Sent as a raw tools/list request: the
 * SDK's `listTools` would compile each output schema the remote sent into a validator.
 */
async function listTools(remote: McpRemote, timeoutMs: number, max: number): Promise<Tool[]> {
  const { ListToolsResultSchema } = await import('@modelcontextprotocol/sdk/types.js');
  const client = await clientOf(remote, timeoutMs);
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 10 && tools.length < max; page++) {
    const result = await client.request(
      { method: 'tools/list', ...(cursor ? { params: { cursor } } : {}) },
      ListToolsResultSchema,
      { timeout: timeoutMs },
    );
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return tools.slice(0, max);
}

function bodyOf(result: CallToolResult): unknown {
  const first = result.content?.[0];
  if (first?.type !== 'text') return result.structuredContent;
  try {
    return JSON.parse(first.text) as unknown;
  } catch {
    return first.text;
  }
}

function mppOffersOf(data: unknown) {
  const parsed = PaymentRequiredMeta.safeParse(data);
  return parsed.success ? parsed.data.challenges.map((c) => offerOf(c as MppChallenge)) : [];
}

/** Reads one tool result as an answer: a result, a challenge (x402 and/or MPP), or an error with its body. */
export function answerOf(result: CallToolResult, readMpp: boolean): RemoteAnswer {
  const meta = (result._meta ?? {}) as Record<string, unknown>;
  const receipt = (meta[X402_META.paymentResponse] ?? meta[X402_MCP_V1_META.paymentResponse]) as
    SettleResponse | undefined;
  const withReceipt = receipt ? { receipt } : {};
  if (!result.isError) {
    const mppReceipt = meta[MPP_META.receipt] as MppReceipt | undefined;
    return {
      type: 'ok',
      status: 200,
      body: result.structuredContent ?? bodyOf(result),
      ...withReceipt,
      ...(mppReceipt ? { mppReceipt } : {}),
    };
  }
  const body = bodyOf(result);
  const challenge: RemoteChallenge | undefined = readChallenge(null, result.structuredContent ?? meta[X402_META.error]);
  const mpp = readMpp ? mppOffersOf(meta[MPP_META.paymentRequired]) : [];
  if (challenge || mpp.length > 0)
    return { type: 'challenge', status: 402, ...(challenge ? { challenge } : {}), mpp, body, ...withReceipt };
  const code = (body as { error?: { code?: unknown } } | null)?.error?.code;
  // An MCP error result has no status: a code of the shared table gives its HTTP status; any other reads as a 500.
  const row = typeof code === 'string' ? (ERROR_CODES as Record<string, { http: number }>)[code] : undefined;
  return { type: 'error', status: row?.http ?? 500, body, ...withReceipt };
}

/** The `_meta` a payment travels in over MCP. */
function paymentMeta(
  payment: { protocol: 'x402'; payload: unknown } | MppCredential | undefined,
  remote: McpRemote,
): Record<string, unknown> {
  if (!payment) return {};
  if (payment.protocol !== 'x402') return { [MPP_META.credential]: payment.credential };
  const base64 = Buffer.from(JSON.stringify(payment.payload)).toString('base64');
  const v1 = (payment.payload as { x402Version?: unknown } | null)?.x402Version === 1;
  return {
    [X402_META.payment]: remote.base64Payments ? base64 : payment.payload,
    ...(v1 ? { [X402_MCP_V1_META.payment]: base64 } : {}),
  };
}

/** One tools/call on `remote` (see {@link McpRemotes.call}). */
async function callTool(
  remote: McpRemote,
  ...[req, timeoutMs, signal, payment, readMpp]: CallArgs
): Promise<RemoteAnswer> {
  const meta = paymentMeta(payment, remote);
  let result: CallToolResult;
  try {
    const client = await clientOf(remote, timeoutMs);
    result = (await client.callTool(
      {
        name: req.mcp.tool,
        arguments: (req.mcp.args ?? {}) as Record<string, unknown>,
        ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}),
      },
      undefined,
      { signal, timeout: timeoutMs },
    )) as CallToolResult;
  } catch (err) {
    if (signal.aborted) throw err;
    const e = err as { code?: unknown; data?: unknown; message?: string };
    if (typeof e.code === 'number' && MPP_ERROR_CODES.includes(e.code)) {
      const mpp = readMpp ? mppOffersOf(e.data) : [];
      if (mpp.length > 0)
        return {
          type: 'challenge',
          status: 402,
          mpp,
          body: (e.data as { problem?: unknown } | undefined)?.problem ?? { message: e.message },
        };
    }
    // The client's own time limit and a closed connection lose the answer; other JSON-RPC errors are the remote's.
    if (typeof e.code === 'number' && !LOST_ANSWER_CODES.includes(e.code)) {
      const status = REQUEST_ERROR_CODES.includes(e.code) ? 400 : 500;
      return { type: 'error', status, body: { error: { code: 'mcp_error', message: e.message ?? String(err) } } };
    }
    if (e.code !== -32001) delete remote.client;
    const cause = (err as { cause?: { code?: string } }).cause;
    return {
      type: 'no_answer',
      message: cause?.code ?? e.message ?? String(err),
      timedOut: /timed? ?out/i.test(e.message ?? ''),
    };
  }
  const offeredInMeta = result.isError && !result.structuredContent && result._meta?.[X402_META.error] !== undefined;
  if (offeredInMeta) remote.base64Payments = true;
  return answerOf(result, readMpp);
}
