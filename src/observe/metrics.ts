import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Registry } from 'prom-client';
import { ToolError } from '../shared/errors.js';
import { collectEventLoopDelay, collectProcessMetrics, promClient } from './metrics-process.js';

const { Counter, Gauge, Histogram } = promClient;
import type { CallEvent } from '../pipeline/invoke.js';
import type { UpstreamMetrics } from '../providers/upstream.js';
import { VERSION } from '../shared/version.js';

/** Prometheus metrics of one runtime, in a registry of its own (several runtimes in one process never mix). */
export interface Metrics {
  registry: Registry;
  /** Counts a call event of the pipeline (see `InvokeDeps.observe`). */
  observe(event: CallEvent): void;
  /** The sink the upstream clients report cache lookups and failures to. */
  upstream: UpstreamMetrics;
  /** Counts a promise rejection nobody handled (the server process logs it and keeps serving). */
  unhandledRejection(): void;
  /** The sink the `/mcp` session table reports to: sessions open, sessions it ended itself. */
  mcpSessions: McpSessionMetrics;
  /** Registers the process metrics (memory, CPU, GC, event loop) once: when the server answers, or at the first scrape. */
  collectProcess(): void;
}

/** What the `/mcp` session table reports: the sessions open, and each session it ended itself and why. */
export interface McpSessionMetrics {
  open(count: number): void;
  ended(reason: 'evicted' | 'expired'): void;
}

/** Registers the `/mcp` session gauge and the counter of sessions ended by the server (evicted, expired). */
function registerMcpSessionMetrics(registers: Registers): McpSessionMetrics {
  const open = new Gauge({
    name: 'tollbooth_mcp_sessions_open',
    help: 'Streamable-HTTP MCP sessions open on /mcp (MCP_MAX_SESSIONS bounds them).',
    registers,
  });
  const ended = new Counter({
    name: 'tollbooth_mcp_sessions_ended_total',
    help: 'MCP sessions the server ended: evicted (the least recently used idle one, to make room) or expired (idle past MCP_SESSION_IDLE_MS).',
    labelNames: ['reason'],
    registers,
  });
  for (const reason of ['evicted', 'expired'] as const) ended.inc({ reason }, 0);
  return { open: (count) => open.set(count), ended: (reason) => ended.inc({ reason }) };
}

const SECONDS = (ms: number) => ms / 1000;

type Registers = Registry[];

/** Registers the build-info gauge, set to 1 with the running version as its label. */
function registerBuildInfo(registers: Registers): void {
  new Gauge({
    name: 'tollbooth_build_info',
    help: 'Always 1; the version label says which release runs.',
    labelNames: ['version'],
    registers,
  }).set({ version: VERSION }, 1);
}

/** Registers the counters, gauge and histograms of the call pipeline: outcomes, revenue, replays, latencies. */
function registerCallMetrics(registers: Registers) {
  return {
    calls: new Counter({
      name: 'tollbooth_paid_calls_total',
      help: 'Paid-tool calls by protocol (x402, mpp) and how they ended: settled, payment_required, rejected, error, settlement_failed, pending, replayed (network "none" before a payment was read, protocol "none" when the call carried none).',
      labelNames: ['tool', 'network', 'protocol', 'outcome'],
      registers,
    }),
    revenue: new Counter({
      name: 'tollbooth_revenue_atomic_total',
      help: "Settled amounts in the network asset's smallest units (USDC: 6 decimals) by protocol (x402, mpp); never sum across networks.",
      labelNames: ['tool', 'network', 'protocol'],
      registers,
    }),
    replays: new Counter({
      name: 'tollbooth_idempotent_replays_total',
      help: 'Calls answered with an earlier paid result: nothing ran or settled again.',
      labelNames: ['tool'],
      registers,
    }),
    inFlight: new Gauge({
      name: 'tollbooth_calls_in_flight',
      help: 'Calls (paid and free) running right now.',
      registers,
    }),
    ...registerCallDurations(registers),
  };
}

/** Registers the latency histograms of verifying, running the handler and settling. */
function registerCallDurations(registers: Registers) {
  return {
    verify: new Histogram({
      name: 'tollbooth_verify_duration_seconds',
      help: 'Reading, claiming and verifying a payment (facilitator /verify included).',
      labelNames: ['network'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
      registers,
    }),
    handler: new Histogram({
      name: 'tollbooth_handler_duration_seconds',
      help: "A paid tool's handler and its output check.",
      labelNames: ['tool'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    settle: new Histogram({
      name: 'tollbooth_settle_duration_seconds',
      help: 'Settling a payment after the handler succeeded (facilitator /settle, chain confirmation included).',
      labelNames: ['network'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers,
    }),
  };
}

type CallMetrics = ReturnType<typeof registerCallMetrics>;

/** Registers the upstream counters (failures, cache hits and misses) and the unhandled-rejection counter. */
function registerUpstreamMetrics(registers: Registers) {
  const upstreamErrors = new Counter({
    name: 'tollbooth_upstream_errors_total',
    help: 'Upstream requests that failed after their retries, by error code.',
    labelNames: ['upstream', 'code'],
    registers,
  });
  const cacheHits = new Counter({
    name: 'tollbooth_upstream_cache_hits_total',
    help: 'Cacheable upstream requests answered from the cache.',
    labelNames: ['upstream'],
    registers,
  });
  const unhandled = new Counter({
    name: 'tollbooth_unhandled_rejections_total',
    help: 'Promise rejections no code handled; logged, and the process kept serving.',
    registers,
  });
  const cacheMisses = new Counter({
    name: 'tollbooth_upstream_cache_misses_total',
    help: 'Cacheable upstream requests not in the cache (fetched, or joined to an identical request in flight).',
    labelNames: ['upstream'],
    registers,
  });
  const upstream: UpstreamMetrics = {
    cacheLookup: (name, hit) => (hit ? cacheHits : cacheMisses).inc({ upstream: name }),
    failed: (name, code) => upstreamErrors.inc({ upstream: name, code }),
  };
  return { upstream, unhandled };
}

/** Records one call event of the pipeline in the call metrics. */
function recordCallEvent(m: CallMetrics, event: CallEvent): void {
  switch (event.type) {
    case 'started':
      m.inFlight.inc();
      return;
    case 'free':
      m.inFlight.dec();
      return;
    case 'paid': {
      m.inFlight.dec();
      const network = event.network ?? 'none';
      // Bounded: the protocol is one of x402 and mpp, or none when the call carried no payment.
      const protocol = event.protocol ?? 'none';
      m.calls.inc({ tool: event.tool, network, protocol, outcome: event.outcome });
      if (event.outcome === 'settled' && event.amount)
        m.revenue.inc({ tool: event.tool, network, protocol }, Number(event.amount));
      if (event.outcome === 'replayed') m.replays.inc({ tool: event.tool });
      if (event.verifyMs !== undefined && event.network) m.verify.observe({ network }, SECONDS(event.verifyMs));
      if (event.handlerMs !== undefined) m.handler.observe({ tool: event.tool }, SECONDS(event.handlerMs));
      if (event.settleMs !== undefined) m.settle.observe({ network }, SECONDS(event.settleMs));
      return;
    }
  }
}

/** Creates the registry with the process metrics and Tollbooth's own: calls, revenue, latencies, upstreams, replays. */
export function createMetrics(): Metrics {
  const registry = new promClient.Registry();
  let processCollected = false;
  collectEventLoopDelay(registry);
  const registers = [registry];
  registerBuildInfo(registers);
  const calls = registerCallMetrics(registers);
  const { upstream, unhandled } = registerUpstreamMetrics(registers);
  return {
    registry,
    observe: (event) => recordCallEvent(calls, event),
    upstream,
    unhandledRejection: () => unhandled.inc(),
    mcpSessions: registerMcpSessionMetrics(registers),
    // prom-client's process metrics load a dozen modules: not on the way to a server's first answer.
    collectProcess: () => {
      if (!processCollected) collectProcessMetrics(registry);
      processCollected = true;
    },
  };
}

const digest = (value: string) => createHash('sha256').update(value).digest();
const isLoopback = (address: string | undefined) =>
  address !== undefined && (address === '::1' || /^(::ffff:)?127\./.test(address));

/**
 * `GET /metrics` in the Prometheus text format. With a token, only `Authorization: Bearer <token>` is answered (401
 * otherwise); without one, only connections from loopback are (403 otherwise): revenue figures are not public.
 */
export function metricsHandler(metrics: Metrics, token: string | undefined): RequestHandler {
  const expected = token === undefined ? undefined : digest(token);
  return (req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    if (expected) {
      const given = /^Bearer\s+(.+)$/i.exec(req.header('authorization') ?? '')?.[1]?.trim();
      if (!given || !timingSafeEqual(digest(given), expected)) {
        res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
        const error = new ToolError(
          'unauthorized',
          'GET /metrics needs the METRICS_TOKEN of this server as a bearer token (Authorization: Bearer <token>).',
        );
        res.status(error.httpStatus).json(error.toBody());
        return;
      }
    } else if (!isLoopback(req.socket.remoteAddress)) {
      const error = new ToolError(
        'forbidden',
        'GET /metrics answers only loopback connections on this server; the operator can set METRICS_TOKEN to scrape it from elsewhere.',
      );
      res.status(error.httpStatus).json(error.toBody());
      return;
    }
    metrics.collectProcess();
    metrics.registry.metrics().then((text) => {
      res.setHeader('Content-Type', metrics.registry.contentType);
      res.end(text);
    }, next);
  };
}
