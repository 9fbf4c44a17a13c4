import { collectDefaultMetrics, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { collectProcessMetrics } from '../../src/observe/metrics-process.js';

const names = async (registry: Registry) => (await registry.getMetricsAsJSON()).map((m) => m.name).sort();

describe('the process metrics', () => {
  it("are prom-client's default metrics, under the same names, CPU time included", async () => {
    const ours = new Registry();
    collectProcessMetrics(ours);
    const theirs = new Registry();
    collectDefaultMetrics({ register: theirs });
    expect(await names(ours)).toEqual(await names(theirs));
  });

  it('count CPU time as it is spent', async () => {
    const registry = new Registry();
    collectProcessMetrics(registry);
    // Spend 50 ms of CPU (measured as CPU, not wall time: a busy machine may give us less than the wall clock).
    const start = process.cpuUsage();
    const spent = () => {
      const d = process.cpuUsage(start);
      return (d.user + d.system) / 1e6;
    };
    while (spent() < 0.05) {
      /* spend some CPU */
    }
    const text = await registry.metrics();
    const total = Number(/^process_cpu_seconds_total (\S+)$/m.exec(text)?.[1]);
    expect(total).toBeGreaterThanOrEqual(0.05);
  });
});
