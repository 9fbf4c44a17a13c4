import { createServer, type Server as HttpServer } from 'node:http';
import { join } from 'node:path';
import express, { type Express } from 'express';
import type { Config } from './config.js';
import { mountFallbacks, mountTools } from './http/app.js';
import { createLogger, type Logger } from './log.js';
import { createMcpRouter } from './mcp/http.js';
import { createMcpServer, type McpDeps } from './mcp/server.js';
import { PaymentBroker } from './payments/broker.js';
import { createFacilitator, type Facilitator } from './payments/facilitator.js';
import { createProviders } from './providers/index.js';
import { SqliteStore } from './store/sqlite.js';
import type { Store } from './store/store.js';
import type { AnyToolDefinition } from './tool.js';
import { tools as registry } from '../tools/index.js';
import { VERSION } from './version.js';

/** Everything one Tollbooth process runs on, wired once. */
export interface Runtime {
  config: Config;
  store: Store;
  facilitator: Facilitator;
  mcpDeps: McpDeps;
  log: Logger;
  close(): Promise<void>;
}

/** Options for tests and embedding: a custom registry, logger or store. */
export interface RuntimeOptions {
  tools?: readonly AnyToolDefinition[];
  log?: Logger;
  store?: Store;
}

/** The composition root: store → facilitator → broker → pipeline dependencies. */
export async function createRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const log = options.log ?? createLogger(config.logLevel);
  const tools = options.tools ?? registry;
  const store = options.store ?? (await SqliteStore.open(join(config.dataDir, 'tollbooth.db')));
  const facilitator = createFacilitator(config);
  const broker = new PaymentBroker(config, store, facilitator, log, tools);
  const mcpDeps: McpDeps = { config, tools, version: VERSION, broker, store, providers: createProviders(), log };
  return { config, store, facilitator, mcpDeps, log, close: () => store.close() };
}

/** Builds the express app: every paid route, MCP streamable HTTP at /mcp, health, fallbacks. */
export function createHttpApp(runtime: Runtime): { app: Express; closeSessions: () => Promise<void> } {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  const mcp = createMcpRouter(runtime.mcpDeps);
  app.use('/mcp', mcp.router);
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', version: VERSION, devPayTo: runtime.config.devPayTo, facilitator: runtime.facilitator.mode });
  });
  mountTools(app, runtime.mcpDeps, runtime.mcpDeps.tools);
  mountFallbacks(app, (err) => runtime.log.error('unhandled request error', { error: String((err as Error)?.stack ?? err) }));
  return { app, closeSessions: mcp.close };
}

/** A listening HTTP server and how to stop it. */
export interface RunningServer {
  url: string;
  port: number;
  server: HttpServer;
  close(): Promise<void>;
}

/** Starts HTTP + /mcp on the configured host and port (port 0 picks a free one). */
export async function listen(runtime: Runtime, port = runtime.config.port, host = runtime.config.host): Promise<RunningServer> {
  const { app, closeSessions } = createHttpApp(runtime);
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const actual = typeof address === 'object' && address ? address.port : port;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${actual}`,
    port: actual,
    server,
    close: async () => {
      await closeSessions();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A fresh MCP server bound to this runtime (stdio, tests). */
export function newMcpServer(runtime: Runtime) {
  return createMcpServer(runtime.mcpDeps);
}
