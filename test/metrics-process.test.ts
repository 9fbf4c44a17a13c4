import { collectDefaultMetrics, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { collectProcessMetrics } from '../src/metrics-process.js';

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
    const until = Date.now() + 50;
    while (Date.now() < until) {
      /* spend some CPU */
    }
    const text = await registry.metrics();
    const total = Number(/^process_cpu_seconds_total (\S+)$/m.exec(text)?.[1]);
    expect(total).toBeGreaterThan(0.03);
  });
});
