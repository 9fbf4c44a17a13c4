import { randomUUID } from 'node:crypto';
import { hostHeaderValidation } from '@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import express, {
  type ErrorRequestHandler,
  type Request,
  type RequestHandler,
  type Response,
  type Router,
} from 'express';
import { clientKey } from '../limits/client-ip.js';
import { turnTakingJson } from '../limits/json-body.js';
import { initializeParamsError, initializeParamsProblem, isInitializeCall } from './initialize.js';
import type { Config } from '../config/config.js';
import { collectAfterTurnover } from './memory-hint.js';
import { createMcpServer, type McpServerDeps } from './server.js';
import { refuseSession, sessionNotFound } from './session-answers.js';
import { SessionTable, type McpSessionEvents } from './sessions.js';

/** What `/mcp` serves: each session's MCP server, within the session bounds and allowed hosts of the configuration. */
export type McpRouterDeps = McpServerDeps & { config: Pick<Config, 'mcpSessions' | 'mcpAllowedHosts'> };

function rpcError(res: Response, status: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}

/** Refuses browser requests whose Origin is not one of the allowed hosts (DNS-rebinding protection). */
function originValidation(allowedHosts: readonly string[]): RequestHandler {
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (!origin) return next();
    let hostname: string;
    try {
      hostname = new URL(origin).hostname;
    } catch {
      return rpcError(res, 403, `Invalid Origin: ${origin}`);
    }
    if (!allowedHosts.includes(hostname)) return rpcError(res, 403, `Origin not allowed: ${origin}`);
    next();
  };
}

/** What a JSON-RPC client is told about a body the parser refused, by the parser's error type. */
function bodyMessage(req: Request, type: string | undefined): string {
  const coding = (req.header('content-encoding') ?? 'identity').trim().toLowerCase();
  switch (type) {
    case 'entity.parse.failed':
      return 'Parse error: the body is not valid JSON; send a JSON-RPC message as UTF-8 JSON.';
    case 'entity.too.large':
      return 'The request body is larger than 1 MB; send a smaller JSON-RPC message.';
    case 'encoding.unsupported':
      return `Content-Encoding ${coding} is not supported; send the JSON-RPC message uncompressed, or as gzip, deflate or br.`;
    case 'charset.unsupported':
      return 'The charset of the body is not supported; send the JSON-RPC message as UTF-8 JSON.';
    default:
      return coding === 'identity'
        ? 'The request body could not be read (its length did not match Content-Length, or the upload was cut off); send it again.'
        : `The request body is not valid ${coding} data, as its Content-Encoding says; send it compressed correctly or uncompressed.`;
  }
}

/**
 * Answers a body the JSON parser refused (not JSON, over the limit, unsupported charset or encoding, a compressed body
 * that does not decompress) with its 4xx status and a JSON-RPC error, rather than letting it reach the app's
 * last-resort 500 handler.
 */
const bodyErrors: ErrorRequestHandler = (err, req, res, next) => {
  const { status, type, expose } = err as { status?: number; type?: string; expose?: boolean };
  if (!expose || typeof status !== 'number' || status < 400 || status >= 500) return next(err);
  res.status(status).json({
    jsonrpc: '2.0',
    error: { code: type === 'entity.parse.failed' ? -32700 : -32000, message: bodyMessage(req, type) },
    id: null,
  });
};

/** Answers one request on /mcp: in its session, or as the initialize that opens a new one (with its own server). */
async function handle(deps: McpRouterDeps, table: Table, req: Request, res: Response): Promise<void> {
  const sessionId = req.header('mcp-session-id');
  if (sessionId) {
    const session = table.use(sessionId, req.method === 'POST');
    if (!session) return sessionNotFound(res, deps.config.mcpSessions.idleMs);
    res.once('close', session.done);
    return session.transport.handleRequest(req, res, req.body);
  }
  if (req.method !== 'POST' || !isInitializeCall(req.body)) {
    return rpcError(res, 400, 'No MCP session: send an initialize request first (without mcp-session-id).');
  }
  // Checked once, here: a valid one is what the SDK's isInitializeRequest would parse again.
  const problem = initializeParamsProblem(req.body);
  if (problem !== undefined) return void res.status(400).json(initializeParamsError(req.body.id, problem));
  // The client as the per-IP limit counts it: its address (behind TRUST_PROXY, the forwarded one), IPv6 by /64.
  const admission = table.admit(clientKey(req.ip ?? req.socket.remoteAddress));
  if (admission.type !== 'admitted') return refuseSession(res, admission, requestId(req.body));
  const { ticket } = admission;
  res.once('close', ticket.done);
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => ticket.opened(id, transport),
  });
  transport.onclose = () => {
    if (transport.sessionId) table.closed(transport.sessionId);
  };
  await createMcpServer(deps).connect(transport);
  await transport.handleRequest(req, res, req.body);
}

type Table = SessionTable<StreamableHTTPServerTransport>;

/** The id of a JSON-RPC request, for an error answering it; null when it has none. */
const requestId = (body: unknown) => (isInitializeCall(body) ? body.id : null);

/**
 * Mounts MCP streamable HTTP (sessions, SSE streams, DELETE to end) with Host/Origin checks; the sessions are bounded
 * by `config.mcpSessions` (src/mcp/sessions.ts) and reported to `events`.
 */
export function createMcpRouter(
  deps: McpRouterDeps,
  events?: McpSessionEvents,
): { router: Router; close: () => Promise<void> } {
  // After each full turnover of the table by eviction or expiry, one full collection hands the ended sessions' memory
  // back (src/mcp/memory-hint.ts).
  const turnedOver = collectAfterTurnover(deps.config.mcpSessions.max);
  const table: Table = new SessionTable(deps.config.mcpSessions, {
    open: (count) => events?.open(count),
    ended: (reason) => {
      events?.ended(reason);
      turnedOver();
    },
  });
  const router = express.Router();
  router.use(hostHeaderValidation(deps.config.mcpAllowedHosts), originValidation(deps.config.mcpAllowedHosts));
  router.use(turnTakingJson({ limit: '1mb' }), bodyErrors);
  router.route('/').all((req, res, next) => {
    handle(deps, table, req, res).catch(next);
  });
  return { router, close: () => table.close() };
}
