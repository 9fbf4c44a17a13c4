import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, InitializeRequestSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

const SHAPE =
  'initialize needs params.protocolVersion (string), params.capabilities (object) and params.clientInfo (object with name and version strings)';

function kindOf(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** True when a message is a JSON-RPC request (it has an id) for `initialize`, whatever its params. */
export function isInitializeCall(
  message: unknown,
): message is { jsonrpc: '2.0'; id: string | number; method: 'initialize'; params?: unknown } {
  if (!isObject(message) || message.method !== 'initialize') return false;
  return typeof message.id === 'string' || typeof message.id === 'number';
}

/** What is wrong with an initialize request's params, in one sentence naming the field; `undefined` when they are valid. */
export function initializeParamsProblem(message: { params?: unknown }): string | undefined {
  const { params } = message;
  if (!isObject(params)) return `${SHAPE}; params is ${kindOf(params)}.`;
  if (typeof params.protocolVersion !== 'string')
    return `${SHAPE}; params.protocolVersion is ${kindOf(params.protocolVersion)}.`;
  if (!isObject(params.capabilities)) return `${SHAPE}; params.capabilities is ${kindOf(params.capabilities)}.`;
  const info = params.clientInfo;
  if (!isObject(info)) return `${SHAPE}; params.clientInfo is ${kindOf(info)}.`;
  if (typeof info.name !== 'string') return `${SHAPE}; params.clientInfo.name is ${kindOf(info.name)}.`;
  if (typeof info.version !== 'string') return `${SHAPE}; params.clientInfo.version is ${kindOf(info.version)}.`;
  const parsed = InitializeRequestSchema.safeParse({ method: 'initialize', params });
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? issue.path.map(String).join('.') : 'params';
  return `Invalid initialize request: ${where}: ${issue?.message ?? 'invalid'}.`;
}

/** The JSON-RPC invalid-params error answering a malformed initialize request. */
export function initializeParamsError(id: string | number | null, problem: string): JSONRPCMessage {
  return { jsonrpc: '2.0', id: id as string | number, error: { code: ErrorCode.InvalidParams, message: problem } };
}

/**
 * Answers initialize requests with missing or invalid params with -32602 naming the field, before the SDK sees them
 * (it would answer -32603 with a schema dump). Call after the server connected to the transport.
 */
export function refuseMalformedInitialize(transport: Transport): void {
  const inner = transport.onmessage;
  if (!inner) return;
  transport.onmessage = (message, extra) => {
    const problem = isInitializeCall(message) ? initializeParamsProblem(message) : undefined;
    if (problem === undefined) return inner(message, extra);
    void transport.send(initializeParamsError((message as { id: string | number }).id, problem)).catch(() => {});
  };
}
