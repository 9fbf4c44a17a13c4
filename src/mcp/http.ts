import { randomUUID } from 'node:crypto';
import { hostHeaderValidation } from '@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import express, {
  type ErrorRequestHandler,
  type Request,
  type RequestHandler,
  type Response,
  type Router,
} from 'express';
import { initializeParamsError, initializeParamsProblem, isInitializeCall } from './initialize.js';
import { createMcpServer, type McpServerDeps } from './server.js';

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

/** The open streamable-HTTP sessions by id, with when each was last used; idle ones are closed by a sweeper. */
class Sessions {
  private readonly open = new Map<string, StreamableHTTPServerTransport>();
  private readonly lastSeen = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(idleMs: number) {
    const sweep = () => {
      const cutoff = Date.now() - idleMs;
      for (const [id, seen] of this.lastSeen) {
        if (seen < cutoff)
          void this.open
            .get(id)
            ?.close()
            .catch(() => {});
      }
    };
    this.sweeper = setInterval(sweep, Math.min(idleMs, 60_000));
    this.sweeper.unref();
  }

  /** The session of this id, marked as used now. */
  use(id: string): StreamableHTTPServerTransport | undefined {
    const transport = this.open.get(id);
    if (transport) this.lastSeen.set(id, Date.now());
    return transport;
  }

  /** A new session's transport: listed once initialized, forgotten once closed. */
  create(): StreamableHTTPServerTransport {
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.open.set(id, transport);
        this.lastSeen.set(id, Date.now());
      },
    });
    transport.onclose = () => {
      if (!transport.sessionId) return;
      this.open.delete(transport.sessionId);
      this.lastSeen.delete(transport.sessionId);
    };
    return transport;
  }

  /** Stops the sweeper and closes every session. */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.open.values()].map((t) => t.close().catch(() => {})));
    this.open.clear();
  }
}

/** Answers one request on /mcp: in its session, or as the initialize that opens a new one (with its own server). */
async function handle(deps: McpServerDeps, sessions: Sessions, req: Request, res: Response): Promise<void> {
  const sessionId = req.header('mcp-session-id');
  const existing = sessionId ? sessions.use(sessionId) : undefined;
  if (existing) return existing.handleRequest(req, res, req.body);
  if (sessionId) return rpcError(res, 404, 'Unknown or expired MCP session; initialize a new one.');
  if (req.method === 'POST' && isInitializeCall(req.body)) {
    const problem = initializeParamsProblem(req.body);
    if (problem !== undefined) return void res.status(400).json(initializeParamsError(req.body.id, problem));
  }
  if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
    return rpcError(res, 400, 'No MCP session: send an initialize request first (without mcp-session-id).');
  }
  const transport = sessions.create();
  await createMcpServer(deps).connect(transport);
  await transport.handleRequest(req, res, req.body);
}

/** Mounts MCP streamable HTTP (sessions, SSE streams, DELETE to end) with Host/Origin checks. */
export function createMcpRouter(deps: McpServerDeps): { router: Router; close: () => Promise<void> } {
  const sessions = new Sessions(deps.config.mcpSessionIdleMs);
  const router = express.Router();
  router.use(hostHeaderValidation(deps.config.mcpAllowedHosts), originValidation(deps.config.mcpAllowedHosts));
  router.use(express.json({ limit: '1mb' }), bodyErrors);
  router.all('/', (req, res, next) => {
    handle(deps, sessions, req, res).catch(next);
  });
  return { router, close: () => sessions.close() };
}
