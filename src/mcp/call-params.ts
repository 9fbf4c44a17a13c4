/** The checks of a tools/call request before anything is read or charged, and the answer to an unknown tool's name. */
import {
  CallToolRequestSchema,
  ErrorCode,
  McpError,
  type CallToolRequest,
  type CallToolResult,
  type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';

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

/** The error result of a call of a tool this server does not list, naming the ones it does. */
export function unknownTool(name: string, names: readonly string[]): CallToolResult {
  const body = {
    error: {
      code: 'not_found',
      message: `Unknown tool "${name}". Available tools: ${names.join(', ')}.`,
      retryable: false,
    },
  };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
}
