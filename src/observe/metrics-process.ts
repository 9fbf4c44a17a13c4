/**
 * The process metrics of prom-client's default set (memory, heap, event-loop delay, handles, file descriptors, GC,
 * start time, Node version) without loading the OpenTelemetry API: prom-client's CPU metric requires it (for
 * exemplars we do not use) and it was 51 of the modules a server loaded at start. CPU time is counted here instead,
 * under the same metric names.
 */
import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';

const require = createRequire(import.meta.url);

/**
 * prom-client's classes, from their own modules: its index also loads the default metrics, and with them the
 * OpenTelemetry API. (The package declares no `exports`, so these paths are its public files.)
 */
export const promClient = {
  Registry: require('prom-client/lib/registry') as typeof PromClient.Registry,
  Counter: require('prom-client/lib/counter') as typeof PromClient.Counter,
  Gauge: require('prom-client/lib/gauge') as typeof PromClient.Gauge,
  Histogram: require('prom-client/lib/histogram') as typeof PromClient.Histogram,
};
type Registry = PromClient.Registry;
const { Counter } = promClient;

/** prom-client's default metrics but its CPU counter (lib/metrics/processCpuTotal.js), by module name. */
const DEFAULT_METRICS = [
  'processStartTime',
  'osMemoryHeap',
  'processOpenFileDescriptors',
  'processMaxFileDescriptors',
  'eventLoopLag',
  'processHandles',
  'processRequests',
  'heapSizeAndUsed',
  'heapSpacesSizeAndUsed',
  'version',
  'gc',
  ...(typeof (process as { getActiveResourcesInfo?: unknown }).getActiveResourcesInfo === 'function'
    ? ['processResources']
    : []),
] as const;

type DefaultMetric = (registry: Registry, config: { eventLoopMonitoringPrecision: number }) => void;

/** Registers the process metrics on `registry` (event-loop delay sampled every 10 ms through monitorEventLoopDelay). */
export function collectProcessMetrics(registry: Registry): void {
  for (const name of DEFAULT_METRICS)
    (require(`prom-client/lib/metrics/${name}`) as DefaultMetric)(registry, { eventLoopMonitoringPrecision: 10 });
  let last = process.cpuUsage();
  const registers = [registry];
  const user = new Counter({
    name: 'process_cpu_user_seconds_total',
    help: 'Total user CPU time spent in seconds.',
    registers,
    // This metric's collect sets all three, as prom-client's own does.
    collect() {
      const now = process.cpuUsage();
      const userSeconds = (now.user - last.user) / 1e6;
      const systemSeconds = (now.system - last.system) / 1e6;
      last = now;
      user.inc(userSeconds);
      system.inc(systemSeconds);
      total.inc(userSeconds + systemSeconds);
    },
  });
  const system = new Counter({
    name: 'process_cpu_system_seconds_total',
    help: 'Total system CPU time spent in seconds.',
    registers,
  });
  const total = new Counter({
    name: 'process_cpu_seconds_total',
    help: 'Total user and system CPU time spent in seconds.',
    registers,
  });
}

/** How often the event-loop delay is sampled. */
const LAG_SAMPLE_MS = 20;

/**
 * The event-loop delay as a timer sees it: how late a 20 ms timer fires. (On Node 20, `monitorEventLoopDelay`, which
 * prom-client's `nodejs_eventloop_lag_*` read, does not record one long synchronous block at all; this does, and a
 * catastrophic regular expression or a blocking call is exactly that.) The maximum is since the previous scrape.
 */
export function collectEventLoopDelay(registry: Registry): () => void {
  const registers = [registry];
  const histogram = new promClient.Histogram({
    name: 'tollbooth_event_loop_delay_seconds',
    help: 'How late a 20 ms timer fired: the time the event loop was busy with something else.',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  let max = 0;
  new promClient.Gauge({
    name: 'tollbooth_event_loop_delay_max_seconds',
    help: 'The longest event-loop delay since the previous scrape.',
    registers,
    collect() {
      this.set(max);
      max = 0;
    },
  });
  let expected = performance.now() + LAG_SAMPLE_MS;
  const timer = setInterval(() => {
    const now = performance.now();
    const delay = Math.max(0, now - expected) / 1000;
    expected = now + LAG_SAMPLE_MS;
    histogram.observe(delay);
    if (delay > max) max = delay;
  }, LAG_SAMPLE_MS);
  timer.unref();
  return () => clearInterval(timer);
}
