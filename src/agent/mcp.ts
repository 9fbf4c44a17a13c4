/**
 * Remote mode's MCP side: an executor for the generic MCP server that carries every registry tool out through the
 * remote caller (elicitation for approvals), adds the agent's own tools, and encodes outcomes as tool results.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { MPP_META, X402_META } from '../shared/mcp-wire.js';
import { isPaidEndpoint, type ToolEndpoint } from '../shared/tool-endpoint.js';
import { AGENT_TOOLS, callAgentTool, type AgentToolDeps } from './agent-tools.js';
import type { Approval, CallTarget } from './call.js';
import type { RemoteCaller } from './caller.js';
import { refused, type CallOutcome } from './outcome.js';
import type { CatalogTool } from './catalog.js';
import { callDiscoverTool, DISCOVER_TOOLS } from './discover-tools.js';
import { ToolError } from '../shared/errors.js';

/** `_meta` key of the note on what the agent paid (amount, network, today's budget). */
export const PAYMENT_NOTE_META_KEY = 'tollbooth/payment';

/** Instructions given to agents at initialize in remote mode. */
export const REMOTE_INSTRUCTIONS =
  'These tools run on remote sellers (their MCP endpoints or published x402 catalogs) and are paid automatically from the user\'s wallet, within the user\'s budget (per-call and daily limits; payments above a threshold are approved by the user first). Call them like any tool: the result comes back with its receipt in _meta["x402/payment-response"] (or _meta["org.paymentauth/receipt"] when paid with MPP) and what was paid in _meta["tollbooth/payment"]. An error result says why nothing was paid (budget, approval, no wallet). Never retry a call whose payment is pending with different input: calling it again with the same input re-sends the same payment. wallet-status and spending-history are free and local, and so are search_services (find paid services in the configured discovery indexes), check_price (what a URL would cost, without paying) and fetch_paid (one paid HTTP request to any x402 or MPP seller, under the same budget).';

/** The call target of a registry tool (paid when the tool has a payment policy). */
export function targetOf(tool: ToolEndpoint): CallTarget {
  return {
    name: tool.name,
    group: tool.group,
    method: tool.method,
    path: tool.path,
    input: tool.input,
    output: tool.output,
    paid: isPaidEndpoint(tool),
  };
}

/** What the MCP server gives a call from the session it came on: its abort signal, and a way to ask the user. */
export interface CallSession {
  signal: AbortSignal;
  /** Asks the user a yes/no question (MCP form elicitation); `unavailable` when the client cannot be asked. */
  confirm: (message: string) => Promise<Approval>;
}

/**
 * Remote mode's executor, as the MCP server (src/mcp/server.ts) takes one: the registry's tools are carried out on the
 * remote, the agent's own tools (`extraTools`) here. The composition root (src/cli) hands it to the server.
 */
export interface RemoteExecutor {
  extraTools: readonly Tool[];
  call(tool: ToolEndpoint, args: unknown, session: CallSession): Promise<CallToolResult>;
  extra(name: string, args: unknown, session: CallSession): Promise<CallToolResult>;
}

function text(value: unknown): { type: 'text'; text: string } {
  return { type: 'text', text: typeof value === 'string' ? value : JSON.stringify(value) };
}

/** Encodes a remote call's outcome as an MCP tool result. */
export function toMcpResult(outcome: CallOutcome): CallToolResult {
  const meta = (o: { receipt?: unknown; mppReceipt?: unknown; payment?: unknown }) => {
    const entries = {
      ...(o.receipt ? { [X402_META.paymentResponse]: o.receipt } : {}),
      ...(o.mppReceipt ? { [MPP_META.receipt]: o.mppReceipt } : {}),
      ...(o.payment ? { [PAYMENT_NOTE_META_KEY]: o.payment } : {}),
    };
    return Object.keys(entries).length > 0 ? { _meta: entries } : {};
  };
  switch (outcome.type) {
    case 'success':
      return {
        content: [text(outcome.output)],
        structuredContent: outcome.output as Record<string, unknown>,
        ...meta(outcome),
      };
    case 'payment_required': {
      // As the remote's own binding has it: the x402 PaymentRequired in structuredContent (as in local mode), the MPP
      // challenges in _meta["org.paymentauth/payment-required"] (and in structuredContent when there is no x402 one).
      const asked = (outcome.challenge ?? { challenges: outcome.mpp ?? [] }) as Record<string, unknown>;
      const mppMeta = outcome.mpp
        ? { _meta: { [MPP_META.paymentRequired]: { httpStatus: 402, challenges: outcome.mpp } } }
        : {};
      return { isError: true, structuredContent: asked, content: [text(asked), text(outcome.hint)], ...mppMeta };
    }
    case 'refused':
      return { isError: true, content: [text(outcome.error.toBody())], ...meta(outcome) };
    case 'remote_error': {
      const body =
        typeof outcome.body === 'object' && outcome.body !== null
          ? outcome.body
          : {
              error: {
                code: 'remote_error',
                message: `The remote answered ${outcome.status}: ${String(outcome.body).slice(0, 300)}`,
                retryable: outcome.status >= 500,
              },
            };
      return { isError: true, content: [text(body)], ...meta(outcome) };
    }
    case 'dry_run':
      return { content: [text(outcome.report)] };
  }
}

/**
 * The executor of remote mode over any seller: the tools the remotes published (`catalog`) are listed first and paid
 * through the remote caller, then the agent's own tools, run here. No registry tool is served (the server is given none).
 */
export function catalogExecutor(
  caller: RemoteCaller,
  agent: AgentToolDeps,
  catalog: readonly CatalogTool[],
): RemoteExecutor {
  const byName = new Map(catalog.map((tool) => [tool.target.name, tool.target]));
  const options = (session: CallSession) => ({
    signal: session.signal,
    approve: (question: string) => session.confirm(question),
  });
  return {
    extraTools: [...catalog.map((tool) => tool.entry), ...AGENT_TOOLS, ...DISCOVER_TOOLS],
    call: async (tool) => toMcpResult(refused(new ToolError('not_found', `Unknown tool: ${tool.name}`))),
    extra: async (name, args, session) => {
      const target = byName.get(name);
      if (target) return toMcpResult(await caller.call(target, args, options(session)));
      if (DISCOVER_TOOLS.some((t) => t.name === name)) {
        const indexes = agent.settings.discovery ?? [];
        return callDiscoverTool({ ...agent, caller, indexes }, name, args, options(session));
      }
      return callAgentTool(agent, name, args);
    },
  };
}
