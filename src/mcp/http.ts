import { randomUUID } from 'node:crypto';
import { hostHeaderValidation } from '@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response, type Router } from 'express';
import { createMcpServer, type McpDeps } from './server.js';

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

/**
 * Answers a body the JSON parser refused (not JSON, over the limit, unsupported charset or encoding) with its 4xx status
 * and a JSON-RPC error, rather than letting it reach the app's last-resort 500 handler.
 */
const bodyErrors: ErrorRequestHandler = (err, _req, res, next) => {
  const { status, type, expose } = err as { status?: number; type?: string; expose?: boolean };
  if (!expose || typeof type !== 'string' || typeof status !== 'number' || status < 400 || status >= 500) return next(err);
  const message =
    type === 'entity.parse.failed'
      ? 'Parse error: the body is not valid JSON; send a JSON-RPC message as UTF-8 JSON.'
      : type === 'entity.too.large'
        ? 'The request body is larger than 1 MB; send a smaller JSON-RPC message.'
        : `The request body could not be read (${type}); send a JSON-RPC message as UTF-8 JSON without content encoding.`;
  res.status(status).json({ jsonrpc: '2.0', error: { code: type === 'entity.parse.failed' ? -32700 : -32000, message }, id: null });
};

/** Mounts MCP streamable HTTP (sessions, SSE streams, DELETE to end) with Host/Origin checks. */
export function createMcpRouter(deps: McpDeps): { router: Router; close: () => Promise<void> } {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const lastSeen = new Map<string, number>();
  const idleMs = deps.config.mcpSessionIdleMs;
  const sweeper = setInterval(() => {
    const cutoff = Date.now() - idleMs;
    for (const [id, seen] of lastSeen) {
      if (seen < cutoff) void sessions.get(id)?.close().catch(() => {});
    }
  }, Math.min(idleMs, 60_000));
  sweeper.unref();
  const router = express.Router();
  router.use(hostHeaderValidation(deps.config.mcpAllowedHosts), originValidation(deps.config.mcpAllowedHosts));
  router.use(express.json({ limit: '1mb' }), bodyErrors);

  const handle = async (req: Request, res: Response) => {
    const sessionId = req.header('mcp-session-id');
    const existing = sessionId ? sessions.get(sessionId) : undefined;
    if (existing && sessionId) {
      lastSeen.set(sessionId, Date.now());
      return existing.handleRequest(req, res, req.body);
    }
    if (sessionId) return rpcError(res, 404, 'Unknown or expired MCP session; initialize a new one.');
    if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
      return rpcError(res, 400, 'No MCP session: send an initialize request first (without mcp-session-id).');
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
        lastSeen.set(id, Date.now());
      },
    });
    transport.onclose = () => {
      if (!transport.sessionId) return;
      sessions.delete(transport.sessionId);
      lastSeen.delete(transport.sessionId);
    };
    await createMcpServer(deps).connect(transport);
    await transport.handleRequest(req, res, req.body);
  };
  router.all('/', (req, res, next) => {
    handle(req, res).catch(next);
  });
  const close = async () => {
    clearInterval(sweeper);
    await Promise.all([...sessions.values()].map((t) => t.close().catch(() => {})));
    sessions.clear();
  };
  return { router, close };
}
