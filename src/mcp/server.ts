import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolRequest,
  type CallToolResult,
  type JSONRPCRequest,
  type ServerNotification,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Config } from '../config.js';
import { invoke } from '../invoke.js';
import type { ServerDeps } from '../server-deps.js';
import { isPaid, type AnyToolDefinition } from '../tool.js';
import { toMcpTool } from './catalog.js';
import { PAYMENT_META_KEY, toCallToolResult } from './encode.js';
import { mppBothResult, readMcpMppPayment, withMpp } from './mpp.js';
import { refuseMalformedInitialize } from './initialize.js';

/** What an MCP server instance needs: the registry, the configuration and the pipeline's dependencies. */
/** The MCP server's dependencies: the neutral server dependencies (pipeline, registry, configuration). */
export type McpDeps = ServerDeps;

/** What a tools/call gets from the session it arrived on, whoever carries it out. */
export interface McpCallSession {
  signal: AbortSignal;
  /** Sends a progress notification when the caller asked for them (ignored otherwise). */
  progress: (done: number, total: number, message?: string) => void;
  /** Asks the user a yes/no question through MCP form elicitation; `unavailable` when the client cannot be asked. */
  confirm: (message: string) => Promise<'accepted' | 'declined' | 'unavailable'>;
}

/** Carries out tools/call in place of the local pipeline (e.g. remote mode: the same tools, executed elsewhere over HTTP). */
export interface McpExecutor {
  /** Entries listed after the registry's: tools that exist only for this executor. */
  extraTools?: readonly Tool[];
  /** Calls one registry tool, paid or free. */
  call(tool: AnyToolDefinition, args: unknown, session: McpCallSession): Promise<CallToolResult>;
  /** Calls one of `extraTools`. */
  extra?(name: string, args: unknown, session: McpCallSession): Promise<CallToolResult>;
}

/** An MCP server whose calls an executor carries out: the same catalog from the same definitions, no local pipeline. */
export interface ExecutorMcpDeps {
  config: Config;
  tools: readonly AnyToolDefinition[];
  version: string;
  executor: McpExecutor;
  /** Replaces the default instructions given to clients at initialize. */
  instructions?: string;
}

const CALL_SHAPE = 'tools/call needs params.name (string) and params.arguments (object, optional)';

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** A tools/call request's params, or a JSON-RPC invalid-params error saying in one sentence what is wrong with them. */
export function callParams(request: JSONRPCRequest): CallToolRequest['params'] {
  const params: unknown = request.params;
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `${CALL_SHAPE}; params is ${params === undefined ? 'missing' : kindOf(params)}.`,
    );
  }
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string') {
    throw new McpError(
      ErrorCode.InvalidParams,
      `${CALL_SHAPE}; params.name is ${name === undefined ? 'missing' : kindOf(name)}.`,
    );
  }
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
    throw new McpError(ErrorCode.InvalidParams, `${CALL_SHAPE}; params.arguments is ${kindOf(args)}.`);
  }
  const parsed = CallToolRequestSchema.safeParse(request);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.map(String).join('.') : 'params';
    throw new McpError(
      ErrorCode.InvalidParams,
      `Invalid tools/call request: ${where}: ${issue?.message ?? 'invalid'}.`,
    );
  }
  return parsed.data.params;
}

function unknownTool(name: string, names: readonly string[]): CallToolResult {
  const body = {
    error: {
      code: 'not_found',
      message: `Unknown tool "${name}". Available tools: ${names.join(', ')}.`,
      retryable: false,
    },
  };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
}

/** tools/list entries, derived once per dependency set rather than once per session. */
const catalogs = new WeakMap<McpDeps | ExecutorMcpDeps, Tool[]>();

function catalogOf(deps: McpDeps | ExecutorMcpDeps): Tool[] {
  let listed = catalogs.get(deps);
  if (!listed) {
    const extra = 'executor' in deps ? (deps.executor.extraTools ?? []) : [];
    const mpp = 'executor' in deps ? undefined : deps.broker.mpp;
    listed = [...deps.tools.map((tool) => toMcpTool(deps.config, tool, mpp)), ...extra];
    catalogs.set(deps, listed);
  }
  return listed;
}

/** Creates one MCP server (one per session or stdio connection) serving every tool of the registry, locally or through an executor. */
export function createMcpServer(deps: McpDeps | ExecutorMcpDeps): Server {
  const executor = 'executor' in deps ? deps.executor : undefined;
  const local = 'executor' in deps ? undefined : deps;
  const server = new Server(
    { name: 'tollbooth', title: 'Tollbooth', version: deps.version },
    {
      // logging: the SDK then answers logging/setLevel per session (conformance: logging-set-level).
      capabilities: { tools: { listChanged: false }, logging: {} },
      instructions:
        (executor && 'instructions' in deps ? deps.instructions : undefined) ??
        'Every tool is paid per call with x402, except the free helpers whose description says they are free. Call a paid tool without payment to receive the payment requirements (isError result with the PaymentRequired object); pay one of the `accepts` options and repeat the call with the PaymentPayload in params._meta["x402/payment"]. The receipt comes back in result._meta["x402/payment-response"].' +
          (local?.broker.mpp.enabled
            ? ' MPP clients may pay instead: the same result carries evm/charge challenges in result._meta["org.paymentauth/payment-required"]; send the credential in params._meta["org.paymentauth/credential"] (receipt in result._meta["org.paymentauth/receipt"]).'
            : ''),
    },
  );
  const listed = catalogOf(deps);
  const byName = new Map(deps.tools.map((tool) => [tool.name, tool]));
  const extraNames = new Set((executor?.extraTools ?? []).map((t) => t.name));
  const session = (
    extra: { signal: AbortSignal; sendNotification: (n: ServerNotification) => Promise<void> },
    progressToken: string | number | undefined,
  ): McpCallSession => ({
    signal: extra.signal,
    progress: (progress, total, message) => {
      if (progressToken === undefined) return;
      void extra
        .sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress, total, ...(message ? { message } : {}) },
        })
        .catch(() => {});
    },
    confirm: async (message) => {
      if (!server.getClientCapabilities()?.elicitation?.form) return 'unavailable';
      try {
        const answer = await server.elicitInput(
          {
            mode: 'form',
            message,
            requestedSchema: {
              type: 'object',
              properties: { approve: { type: 'boolean', title: 'Approve', description: 'true to go ahead' } },
              required: ['approve'],
            },
          },
          { signal: extra.signal },
        );
        return answer.action === 'accept' && answer.content?.approve === true ? 'accepted' : 'declined';
      } catch {
        return 'unavailable';
      }
    },
  });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));

  type CallParams = CallToolRequest['params'];
  type CallExtra = Parameters<NonNullable<Server['fallbackRequestHandler']>>[1];
  const callTool = async (params: CallParams, extra: CallExtra): Promise<CallToolResult> => {
    const meta = params._meta as Record<string, unknown> | undefined;
    if (executor) {
      const args = params.arguments;
      const own = session(extra, meta?.progressToken as string | number | undefined);
      const tool = byName.get(params.name);
      if (tool) return executor.call(tool, args, own);
      if (extraNames.has(params.name) && executor.extra) return executor.extra(params.name, args, own);
      return unknownTool(
        params.name,
        listed.map((t) => t.name),
      );
    }
    const pipeline = local!;
    const tool = byName.get(params.name);
    if (!tool)
      return unknownTool(
        params.name,
        listed.map((t) => t.name),
      );
    if (!isPaid(tool)) {
      // A free tool: no payment is read (nor any x402/MPP `_meta`), and its result carries no receipt.
      return toCallToolResult(
        await invoke(pipeline, { tool, input: params.arguments, transport: 'mcp', signal: extra.signal }),
        tool.name,
      );
    }
    const payment = meta?.[PAYMENT_META_KEY];
    const mpp = await readMcpMppPayment(meta, PAYMENT_META_KEY);
    if (mpp.type === 'both') return mppBothResult();
    const progressToken = meta?.progressToken as string | number | undefined;
    const result = await invoke(pipeline, {
      tool,
      input: params.arguments,
      payment:
        mpp.type === 'mpp'
          ? mpp.payment
          : payment === undefined || payment === null
            ? undefined
            : { source: 'mcp-meta', value: payment },
      transport: 'mcp',
      signal: extra.signal,
      progress: (progress, total, message) => {
        if (progressToken === undefined) return;
        void extra
          .sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress, total, ...(message ? { message } : {}) },
          })
          .catch(() => {});
      },
    });
    return withMpp(toCallToolResult(result, tool.name), result, pipeline.broker.mpp, tool, mpp);
  };

  // tools/call is not registered with setRequestHandler: the SDK would parse it with CallToolRequestSchema first and
  // answer malformed params (arguments an array, no name) with -32603 and a raw schema dump. Here the request is
  // checked first and refused with -32602 and one sentence, before anything is read or charged.
  server.fallbackRequestHandler = async (request, extra) => {
    if (request.method !== 'tools/call') throw new McpError(ErrorCode.MethodNotFound, 'Method not found');
    return callTool(callParams(request), extra);
  };
  // Every transport this server connects to (stdio, each streamable-HTTP session) refuses a malformed initialize with
  // -32602 naming the field, as tools/call does above.
  const connect = server.connect.bind(server);
  server.connect = async (transport) => {
    await connect(transport);
    refuseMalformedInitialize(transport);
  };
  return server;
}
