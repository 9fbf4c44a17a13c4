/**
 * The MCP server: lists the registry's tools and hands every tools/call to an executor, which carries it out (the
 * local pipeline, `src/mcp/local.ts`, or the agent's remote executor). It reads no payment and runs no tool itself.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { AnyToolDefinition } from '../tool/tool.js';
import { callParams, unknownTool } from './call-params.js';
import { refuseMalformedInitialize } from './initialize.js';
import { callSession, type McpCallSession } from './session.js';
import { sharedValidator } from './validator.js';

export type { McpCallSession } from './session.js';

/** Carries out tools/call: the local pipeline, or the same tools executed elsewhere (remote mode, over HTTP). */
export interface McpExecutor {
  /** Entries listed after the registry's: tools that exist only for this executor. */
  extraTools?: readonly Tool[];
  /** Calls one registry tool, paid or free. */
  call(tool: AnyToolDefinition, args: unknown, session: McpCallSession): Promise<CallToolResult>;
  /** Calls one of `extraTools`. */
  extra?(name: string, args: unknown, session: McpCallSession): Promise<CallToolResult>;
}

/** The tools an MCP server lists: each registry tool and its tools/list entry, in the same order. */
export interface McpCatalog {
  tools: readonly AnyToolDefinition[];
  entries: readonly Tool[];
}

/** What an MCP server serves: a catalog it is given (built by the composition root), carried out by an executor. */
export interface McpServerDeps {
  catalog: McpCatalog;
  version: string;
  executor: McpExecutor;
  /** What clients are told at initialize. */
  instructions: string;
}

/**
 * The SDK's server, refusing a malformed initialize with -32602 naming the field (as tools/call does below) on every
 * transport it connects to (stdio, each streamable-HTTP session): the filter goes in once the SDK has installed its
 * own message handler.
 */
class TollboothServer extends Server {
  override async connect(transport: Transport): Promise<void> {
    await super.connect(transport);
    refuseMalformedInitialize(transport);
  }
}

/** Creates one MCP server (one per session or stdio connection) serving every tool of the registry through its executor. */
export function createMcpServer(deps: McpServerDeps): Server {
  const { executor } = deps;
  const server = new TollboothServer(
    { name: 'tollbooth', title: 'Tollbooth', version: deps.version },
    // logging: the SDK then answers logging/setLevel per session (conformance: logging-set-level).
    {
      capabilities: { tools: { listChanged: false }, logging: {} },
      instructions: deps.instructions,
      // One validator for all sessions: the SDK's default is an Ajv instance per server (src/mcp/validator.ts).
      jsonSchemaValidator: sharedValidator(),
    },
  );
  const extraTools = executor.extraTools ?? [];
  const listed = [...deps.catalog.entries, ...extraTools];
  const byName = new Map(deps.catalog.tools.map((tool) => [tool.name, tool]));
  const extraNames = new Set(extraTools.map((t) => t.name));
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));
  // tools/call is not registered with setRequestHandler: the SDK would parse it with CallToolRequestSchema first and
  // answer malformed params (arguments an array, no name) with -32603 and a raw schema dump. Here the request is
  // checked first and refused with -32602 and one sentence, before anything is read or charged.
  server.fallbackRequestHandler = async (request, extra) => {
    if (request.method !== 'tools/call') throw new McpError(ErrorCode.MethodNotFound, 'Method not found');
    const params = callParams(request);
    const session = callSession(server, extra, params._meta as Record<string, unknown> | undefined);
    const tool = byName.get(params.name);
    if (tool) return executor.call(tool, params.arguments, session);
    if (extraNames.has(params.name) && executor.extra) return executor.extra(params.name, params.arguments, session);
    return unknownTool(
      params.name,
      listed.map((t) => t.name),
    );
  };
  return server;
}
