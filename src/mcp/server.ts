import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Config } from '../config.js';
import { invokeFree, invokePaid, type FreeCallResult, type InvokeDeps } from '../invoke.js';
import type { AnyFreeToolDefinition, AnyToolDefinition } from '../tool.js';
import { toFreeMcpTool, toMcpTool } from './catalog.js';
import { PAYMENT_META_KEY, toCallToolResult } from './encode.js';

/** What an MCP server instance needs: the registry, the configuration and the pipeline's dependencies. */
export interface McpDeps extends InvokeDeps {
  config: Config;
  tools: readonly AnyToolDefinition[];
  /** Free helper endpoints, listed after the paid tools and called without payment. */
  freeTools?: readonly AnyFreeToolDefinition[];
  version: string;
}

function unknownTool(name: string, names: readonly string[]): CallToolResult {
  const body = { error: { code: 'not_found', message: `Unknown tool "${name}". Available tools: ${names.join(', ')}.`, retryable: false } };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
}

function freeResult(result: FreeCallResult): CallToolResult {
  if (result.type === 'error') return { isError: true, content: [{ type: 'text', text: JSON.stringify(result.error.toBody()) }] };
  return { content: [{ type: 'text', text: JSON.stringify(result.output) }], structuredContent: result.output as Record<string, unknown> };
}

/** tools/list entries, derived once per dependency set rather than once per session. */
const catalogs = new WeakMap<McpDeps, Tool[]>();

function catalogOf(deps: McpDeps): Tool[] {
  let listed = catalogs.get(deps);
  if (!listed) {
    listed = [...deps.tools.map((tool) => toMcpTool(deps.config, tool)), ...(deps.freeTools ?? []).map(toFreeMcpTool)];
    catalogs.set(deps, listed);
  }
  return listed;
}

/** Creates one MCP server (one per session or stdio connection) serving every tool of the registry. */
export function createMcpServer(deps: McpDeps): Server {
  const server = new Server(
    { name: 'tollbooth', title: 'Tollbooth', version: deps.version },
    {
      capabilities: { tools: { listChanged: false } },
      instructions:
        'Every tool is paid per call with x402, except the free helpers whose description says they are free. Call a paid tool without payment to receive the payment requirements (isError result with the PaymentRequired object); pay one of the `accepts` options and repeat the call with the PaymentPayload in params._meta["x402/payment"]. The receipt comes back in result._meta["x402/payment-response"].',
    },
  );
  const listed = catalogOf(deps);
  const byName = new Map(deps.tools.map((tool) => [tool.name, tool]));
  const freeByName = new Map((deps.freeTools ?? []).map((tool) => [tool.name, tool]));

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const free = freeByName.get(request.params.name);
    if (free) return freeResult(await invokeFree(deps, { tool: free, input: request.params.arguments, signal: extra.signal }));
    const tool = byName.get(request.params.name);
    if (!tool) return unknownTool(request.params.name, listed.map((t) => t.name));
    const meta = request.params._meta as Record<string, unknown> | undefined;
    const payment = meta?.[PAYMENT_META_KEY];
    const progressToken = meta?.progressToken as string | number | undefined;
    const result = await invokePaid(deps, {
      tool,
      input: request.params.arguments,
      payment: payment === undefined || payment === null ? undefined : { source: 'mcp-meta', value: payment },
      transport: 'mcp',
      signal: extra.signal,
      progress: (progress, total, message) => {
        if (progressToken === undefined) return;
        void extra
          .sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total, ...(message ? { message } : {}) } })
          .catch(() => {});
      },
    });
    return toCallToolResult(result);
  });
  return server;
}
