import { performance } from 'node:perf_hooks';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PaymentRequired } from '@x402/core/types';
import { loadConfig } from '../../src/config/config.js';
import { invoke as invokePaid } from '../../src/pipeline/invoke.js';
import { silentLogger } from '../../src/shared/log.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { annuity } from '../../tools/annuity.js';
import { LOCAL_NETWORK, startPaidEnvironment } from '../support/paid.js';
import { signExactPayment } from '../support/payer.js';

/** Per-call timings in milliseconds. */
export interface BrokerLatency {
  calls: number;
  total: number[];
  facilitator: number[];
  added: number[];
}

/** Runs paid annuity calls through the pipeline and separates the broker's own time from facilitator and chain time. */
export async function measureBrokerLatency(calls: number): Promise<BrokerLatency> {
  const paid = await startPaidEnvironment(1);
  const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-bench-'));
  // Limits off: this measures the broker, and 200 calls from one payer would meet the per-payer limit.
  const limitsOff = {
    RATE_LIMIT_IP_PER_MINUTE: '0',
    RATE_LIMIT_PAYER_PER_MINUTE: '0',
    RATE_LIMIT_TOOL_PER_MINUTE: '0',
  };
  const runtime = await createRuntime(
    loadConfig({ ...paid.env, ...limitsOff, DATA_DIR: dataDir, LOG_LEVEL: 'silent' }),
    { log: silentLogger, tools: [annuity] as never },
  );
  let facilitatorMs = 0;
  const client = runtime.facilitator.client as unknown as Record<
    'verify' | 'settle',
    (...a: unknown[]) => Promise<unknown>
  >;
  for (const method of ['verify', 'settle'] as const) {
    const original = client[method].bind(client);
    client[method] = async (...a: unknown[]) => {
      const t0 = performance.now();
      try {
        return await original(...a);
      } finally {
        facilitatorMs += performance.now() - t0;
      }
    };
  }
  const challenge = runtime.serverDeps.broker.challenge(annuity as never) as PaymentRequired;
  const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK)!;
  const payer = paid.payers[0]!;
  const result: BrokerLatency = { calls, total: [], facilitator: [], added: [] };
  const input = { payment: 100, ratePerPeriod: 0.05, periods: 10 };
  for (let i = 0; i < calls + 10; i++) {
    const payment = await signExactPayment(payer, entry);
    facilitatorMs = 0;
    const t0 = performance.now();
    const out = await invokePaid(runtime.serverDeps, {
      tool: annuity as never,
      input,
      proof: { source: 'mcp-meta', value: payment },
      transport: 'mcp',
      signal: new AbortController().signal,
    });
    const total = performance.now() - t0;
    if (out.type !== 'success') throw new Error(`paid call failed: ${JSON.stringify(out)}`);
    if (i < 10) continue; // warm-up
    result.total.push(total);
    result.facilitator.push(facilitatorMs);
    result.added.push(total - facilitatorMs);
  }
  await runtime.close();
  await paid.stop();
  rmSync(dataDir, { recursive: true, force: true });
  return result;
}
