import { createServer, type Server as HttpServer } from 'node:http';
import express, { type Express, type RequestHandler } from 'express';
import { ConfigError, type Config } from '../config/config.js';
import { mountDiscovery } from '../discovery/index.js';
import { mcpCatalog } from '../discovery/mcp-tools.js';
import { mountFallbacks, mountTools, paidRoutes } from '../http/app.js';
import { chargeScope } from '../http/encode.js';
import { mountHealth } from '../observe/health.js';
import { mountHome } from '../discovery/home.js';
import { createLimits, type Limits } from '../limits/limiter.js';
import { createLogger, type Logger } from '../shared/log.js';
import { metricsHandler, type Metrics } from '../observe/metrics.js';
import { observedUpkeep } from './observed-upkeep.js';
import { CallTracker, createCallObserver } from '../observe/observe.js';
import { PaymentBroker } from '../payments/broker.js';
import { mppStartProblem } from '../payments/mpp/settings.js';
import type { Facilitator } from '../payments/facilitators/facilitator.js';
import { startBatchSeller } from '../payments/batch/start.js';
import { SettledOutbox } from '../payments/ledger/settled-outbox.js';
import { createProviders } from '../providers/index.js';
import { redactingLogger, Redactor } from '../shared/redact.js';
import type { ServerDeps } from './server-deps.js';
import { RequestGate, shutdownHttp } from './shutdown.js';
import { afterFirstAnswers, openedLater, openStoreAndBook } from './store-and-book.js';
import type { PaymentLedger } from '../store/ledger.js';
import type { Store } from '../store/store.js';
import { isPaid, type AnyToolDefinition } from '../tool/tool.js';
import { tools as registry } from '../../tools/index.js';
import { VERSION } from '../shared/version.js';
import { ToolWorkers, type WorkerEntry } from '../workers/pool.js';

/** Everything one Tollbooth process runs on, wired once. */
export interface Runtime {
  config: Config;
  store: Store;
  facilitator: Facilitator;
  /** What every transport serves the registry with: the pipeline's dependencies, the tools, the configuration. */
  serverDeps: ServerDeps;
  log: Logger;
  /** This runtime's Prometheus registry and sinks. */
  metrics: Metrics;
  /** The calls running right now (shutdown waits for them). */
  calls: CallTracker;
  /** Abuse limits: the per-IP middleware and the per-payer/per-tool check the pipeline runs after verification. */
  limits: Limits;
  /** Settles when the start-up reconciliation of pending settlements has finished. */
  reconciled: Promise<void>;
  /** Runs what waits for the first answers (process metrics, a store left for later); rejects if it fails. */
  started(): Promise<void>;
  close(): Promise<void>;
}

/** Options for tests and embedding: a custom registry, logger or store. */
export interface RuntimeOptions {
  /** The tools served, paid (with a price) and free (without); defaults to the registry's. */
  tools?: readonly AnyToolDefinition[];
  log?: Logger;
  store?: Store;
  /** The worker threads' entry module (tests: one that waits on a gate); defaults to `tool-worker.js`. */
  workerEntry?: WorkerEntry;
  /** The facilitator thread's entry module (tests: one that wraps the facilitator); defaults to `facilitator-worker.js`. */
  facilitatorEntry?: WorkerEntry;
  /** Open the store in {@link Runtime.started} (or on first use) instead of before the runtime is returned. */
  openStoreLater?: boolean;
}

/** The composition root: store → facilitator → broker → pipeline dependencies. */
export async function createRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const mppProblem = mppStartProblem(config.mpp);
  if (mppProblem) throw new ConfigError(mppProblem);
  // Every line is blanked of the configured credentials, in any encoding a facilitator or upstream may echo them in.
  const log = redactingLogger(options.log ?? createLogger(config.logLevel), new Redactor(config.secrets ?? []));
  const tools = options.tools ?? registry;
  const paid = tools.filter(isPaid);
  const { store, facilitator, book, deferred } = await openStoreAndBook(config, log, paid, options);
  // Each consumer gets its part of the store: the broker the payment ledger, handlers the tool state, limits the buckets.
  // Before serving: outcomes journaled while the store was down are stored first (so no claim looks abandoned).
  const outbox = await SettledOutbox.open(config.dataDir, store.ledger, log);
  const batch = await startBatchSeller(config, facilitator, store, paid, log);
  const offer = batch ? { ...book, batch } : book;
  const broker = new PaymentBroker(config, store.ledger, facilitator, log, paid, outbox, offer, undefined, batch);
  const { metrics, claims } = await observedUpkeep(config, { batch, facilitator, store, outbox, log });
  const calls = new CallTracker();
  const observe = createCallObserver(log, [calls, metrics]);
  const providers = createProviders(config, log, metrics.upstream);
  const limits = createLimits(config.limits, store.buckets, log);
  const serverDeps: ServerDeps = {
    config,
    tools,
    version: VERSION,
    broker,
    store: store.toolState,
    providers,
    log,
    observe,
    admit: limits.admit,
    workers: new ToolWorkers(tools, config.workers, options.workerEntry, metrics.registry),
  };
  const upkeep = startUpkeep(broker, store.ledger, log, staleClaimMs(config), deferred?.opened);
  let closed = false;
  return {
    config,
    store,
    facilitator,
    serverDeps,
    log,
    metrics,
    calls,
    limits,
    reconciled: upkeep.reconciled,
    started: () => afterFirstAnswers(() => (closed ? undefined : openedLater(metrics, deferred))),
    close: async () => {
      closed = true;
      limits.close();
      await serverDeps.workers?.close();
      await upkeep.stop();
      await claims?.stop();
      await outbox.close(config.shutdownTimeoutMs);
      await facilitator.close();
      await store.close();
    },
  };
}

const PURGE_INTERVAL_MS = 60 * 60_000;

/**
 * When a claim whose call never ended is looked up on chain (STALE_CLAIM_SECONDS, else longer than any call can
 * verify and settle, plus a minute). Any value is safe for money: the pass acts only on what the chain decides (paid,
 * with its transaction; or never payable any more); a shorter one only looks up running calls sooner.
 */
function staleClaimMs(config: Config): number {
  if (config.staleClaimSeconds !== undefined) return config.staleClaimSeconds * 1000;
  return config.facilitator.timeoutMs + config.facilitator.settleTimeoutMs + 60_000;
}
const RECONCILE_INTERVAL_MS = 60_000;

/** Reconciles pending settlements and stale claims at start-up and every minute; purges expired idempotency records hourly. */
function startUpkeep(
  broker: PaymentBroker,
  ledger: PaymentLedger,
  log: Logger,
  staleClaimMs: number,
  storeOpened: Promise<unknown> = Promise.resolve(),
) {
  // The first pass waits for a store opened later (if it fails to open, the pass fails and says so); stopping
  // before the store was ever opened waits for nothing.
  let begun = false;
  let running: Promise<void> = storeOpened.then(
    () => void (begun = true),
    () => void (begun = true),
  );
  const reconcile = () => {
    running = running.then(() =>
      broker.reconciler.reconcileAll(new Date(Date.now() - staleClaimMs).toISOString()).then(
        () => undefined,
        (err: unknown) =>
          log.error('reconciling pending settlements failed', { error: String((err as Error)?.message ?? err) }),
      ),
    );
    return running;
  };
  const reconciled = reconcile();
  const purge = () => {
    ledger
      .purgeIdempotency(new Date().toISOString())
      .catch((err: unknown) => log.warn('purging idempotency records failed', { error: String(err) }));
  };
  void running.then(purge);
  const timers = [setInterval(purge, PURGE_INTERVAL_MS), setInterval(() => void reconcile(), RECONCILE_INTERVAL_MS)];
  for (const t of timers) t.unref();
  return {
    reconciled,
    stop: async () => {
      for (const t of timers) clearInterval(t);
      if (begun) await running;
    },
  };
}

/**
 * `/mcp`, with the MCP SDK loaded on the first request to it: HTTP callers and discovery never pay for it, and a
 * server starts without it. The router is built once; closing before any request closes nothing.
 */
function lazyMcpRouter(
  deps: ServerDeps,
  metrics: Metrics['mcpSessions'],
): { handler: RequestHandler; close: () => Promise<void> } {
  let router: Promise<Awaited<ReturnType<(typeof import('../mcp/http.js'))['createMcpRouter']>>> | undefined;
  const load = () =>
    (router ??= Promise.all([import('../mcp/http.js'), localMcpServerDeps(deps)]).then(([http, served]) =>
      http.createMcpRouter(served, metrics),
    ));
  return {
    handler: (req, res, next) => {
      load().then((mcp) => mcp.router(req, res, next), next);
    },
    close: async () => {
      if (router) await (await router).close();
    },
  };
}

/** Builds the express app: every paid route, MCP streamable HTTP at /mcp, health, readiness, metrics, fallbacks. */
export function createHttpApp(runtime: Runtime): {
  app: Express;
  closeSessions: () => Promise<void>;
  gate: RequestGate;
} {
  const app = express();
  app.disable('x-powered-by');
  // Answers are per call (no-store or private): an ETag would only cost a hash of every body.
  app.set('etag', false);
  app.set('trust proxy', runtime.config.trustProxy);
  // Before any refusal: the requests of paid routes are marked, so their refusals end with the charge fact.
  app.use(chargeScope(paidRoutes(runtime.serverDeps.tools)));
  // In front of everything else: a flood is cut off before any body, header or payment is read.
  app.use(runtime.limits.perIp);
  const gate = new RequestGate();
  app.use(gate.middleware);
  const mcp = lazyMcpRouter(runtime.serverDeps, runtime.metrics.mcpSessions);
  app.use('/mcp', mcp.handler);
  mountHealth(app, runtime.config, runtime.store, runtime.facilitator, runtime.serverDeps.broker.book);
  app.get('/metrics', metricsHandler(runtime.metrics, runtime.config.metricsToken));
  mountDiscovery(app, runtime.serverDeps);
  mountHome(app, runtime.config, runtime.serverDeps.tools, runtime.serverDeps.broker.book);
  mountTools(app, runtime.serverDeps, runtime.serverDeps.tools);
  mountFallbacks(app, (err) =>
    runtime.log.error('unhandled request error', { error: String((err as Error)?.stack ?? err) }),
  );
  return { app, closeSessions: mcp.close, gate };
}

/** A listening HTTP server and how to stop it. */
export interface RunningServer {
  url: string;
  port: number;
  server: HttpServer;
  /** Stops at once: sessions and connections are dropped (tests). */
  close(): Promise<void>;
  /** Stops gracefully: no new requests, running calls finish and settle within `timeoutMs`; resolves whether they all did. */
  shutdown(timeoutMs: number): Promise<boolean>;
}

/** Starts HTTP + /mcp on the configured host and port (port 0 picks a free one). */
export async function listen(
  runtime: Runtime,
  port = runtime.config.port,
  host = runtime.config.host,
): Promise<RunningServer> {
  const { app, closeSessions, gate } = createHttpApp(runtime);
  // Headers up to 64 KiB reach the app, so an over-long payment header is refused with our own reason (a 400 naming
  // the limit in src/payments/reading/bounds.ts) rather than Node's bare 431 at its 16 KiB default.
  const server = createServer({ maxHeaderSize: 64 * 1024 }, app);
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
    shutdown: (timeoutMs) =>
      shutdownHttp({ server, gate, calls: runtime.calls, closeSessions, log: runtime.log }, timeoutMs),
  };
}

/** A fresh MCP server bound to this runtime, carried out by its pipeline (stdio, tests). */
export async function newMcpServer(runtime: Runtime) {
  const [{ createMcpServer }, served] = await Promise.all([
    import('../mcp/server.js'),
    localMcpServerDeps(runtime.serverDeps),
  ]);
  return createMcpServer(served);
}

/** The MCP server of a selling process: its catalog (prices and MPP offers), carried out by the local pipeline. */
async function localMcpServerDeps(deps: ServerDeps) {
  const { localExecutor, localInstructions } = await import('../mcp/local.js');
  return {
    config: deps.config,
    catalog: mcpCatalog(deps.config, deps.tools, deps.broker.mpp, deps.broker.book, (tool) => deps.broker.v2Face(tool)),
    version: deps.version,
    executor: localExecutor(deps),
    instructions: localInstructions(deps.broker.mpp.enabled),
  };
}
