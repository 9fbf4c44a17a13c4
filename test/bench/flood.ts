/**
 * Paid flood of the slowest inputs (`npm run bench`, or alone: `node --import tsx test/bench/flood.ts`): the built
 * CLI (`dist/bin/cli.js serve`, or BENCH_FLOOD_CLI, e.g. an older build to compare) in its own process, its
 * in-process facilitator settling on a local hardhat chain; BENCH_FLOOD_CONNECTIONS paying callers (default 20) for
 * BENCH_FLOOD_SECONDS (default 15) call `password-strength` with a l33t-dense 256-character password and
 * `solidity-scan` with 510 KB of rule-dense lines, each with a fresh pre-signed payment, while `/healthz` is requested
 * every 10 ms from another process (health-poller.mjs). A caller answered 503 `tool_busy` (refused before its payment
 * was read) waits its Retry-After and sends the same payment again. Reports `/healthz` p50/p99/max, the server's own
 * event-loop delay, paid calls per second, the answers by status and code, the paying callers that failed, and what
 * the pay-to address received against the paid answers.
 */
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import type { PrivateKeyAccount } from 'viem/accounts';
import { mint } from '../support/chain/token.js';
import { LOCAL_NETWORK, startPaidEnvironment } from '../support/paid.js';
import { spawnServe } from '../support/spawn.js';
import { encodePayment, signExactPayment } from '../support/payer.js';

const write = (line: string) => process.stdout.write(line + '\n');
const LIMITS_OFF = { RATE_LIMIT_IP_PER_MINUTE: '0', RATE_LIMIT_PAYER_PER_MINUTE: '0', RATE_LIMIT_TOOL_PER_MINUTE: '0' };

/** The slowest inputs found: zxcvbn's l33t search on a dense 256-character password; 10 MB of findings unbounded. */
export function floodInputs(): Array<{ tool: string; path: string; body: string }> {
  const password = '4@3!1|0$5+7(8#9'.repeat(20).slice(0, 256);
  const line =
    'tx.origin; block.timestamp; selfdestruct(x); a.delegatecall(b); assembly {} ecrecover(h,v,r,s); x.send(1);\n';
  let source = '';
  while (Buffer.byteLength(source + line) <= 510 * 1024) source += line;
  return [
    { tool: 'password-strength', path: '/api/password-strength', body: JSON.stringify({ password }) },
    { tool: 'solidity-scan', path: '/api/solidity-scan', body: JSON.stringify({ source }) },
  ];
}

const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

/** Polls `/healthz` every 10 ms from a process of its own (health-poller.mjs) until stopped; latencies in ms. */
function pollHealth(url: string): { stop: () => Promise<{ times: number[]; failed: number; lags: number[] }> } {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./health-poller.mjs', import.meta.url)), url], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    stop: async () => {
      child.stdin.write('stop\n');
      await exited;
      return JSON.parse(out) as { times: number[]; failed: number; lags: number[] };
    },
  };
}

/**
 * Payments signed ahead (BENCH_FLOOD_PAYMENTS per tool, default 150), by the payers in turn, each valid for the
 * challenge's `maxTimeoutSeconds` (a longer window is refused) and a fresh nonce. The run must start within that.
 */
async function signPayments(payers: readonly PrivateKeyAccount[], entry: PaymentRequirements): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < Number(process.env.BENCH_FLOOD_PAYMENTS ?? 150); i++) {
    // Valid for the challenge's window plus 50 of the 60 seconds of skew allowed, from its own signing.
    const validBefore = BigInt(Math.floor(Date.now() / 1000) + entry.maxTimeoutSeconds + 50);
    out.push(encodePayment(await signExactPayment(payers[i % payers.length]!, entry, { validBefore })));
  }
  return out;
}

/** The server's event-loop delay figures from /metrics (loopback needs no token); reading resets the maximum. */
async function eventLoop(url: string): Promise<{ maxSeconds: number; over50ms: number; count: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? NaN);
  return {
    maxSeconds: value(/^tollbooth_event_loop_delay_max_seconds (\S+)$/m),
    count: value(/^tollbooth_event_loop_delay_seconds_count (\S+)$/m),
    over50ms:
      value(/^tollbooth_event_loop_delay_seconds_count (\S+)$/m) -
      value(/^tollbooth_event_loop_delay_seconds_bucket\{le="0.05"\} (\S+)$/m),
  };
}

/** Runs the flood; returns whether every paid call answered 200 was settled once (the pay-to's balance). */
export async function runFlood(label = '(h)', extraEnv: Record<string, string> = {}): Promise<boolean> {
  const seconds = Number(process.env.BENCH_FLOOD_SECONDS ?? 15);
  const connections = Number(process.env.BENCH_FLOOD_CONNECTIONS ?? 20);
  const paid = await startPaidEnvironment(7);
  for (const payer of paid.payers) await mint(paid.chain, paid.token, payer.address, 90_000_000n);
  const server = await spawnServe(
    { ...paid.env, ...LIMITS_OFF, LOG_LEVEL: 'info', ...extraEnv },
    [],
    process.env.BENCH_FLOOD_CLI,
  );
  try {
    const inputs = floodInputs();
    const pools: string[][] = [];
    const amounts: bigint[] = [];
    for (const input of inputs) {
      const res = await fetch(server.url + input.path, { method: 'POST' });
      const challenge = JSON.parse(
        Buffer.from(res.headers.get('payment-required') ?? '', 'base64').toString('utf8'),
      ) as PaymentRequired;
      const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK);
      if (!entry) throw new Error(`${input.tool} does not advertise the local network`);
      pools.push(await signPayments(paid.payers, entry as PaymentRequirements));
      amounts.push(BigInt(entry.amount));
    }
    const answers: Record<string, number> = {};
    let ok = 0;
    const okByTool = inputs.map(() => 0);
    const payToBefore = await paid.balance(paid.payTo);
    let failed = 0;
    let busy = 0;
    const loopBefore = await eventLoop(server.url);
    process.stderr.write(`flood: ${pools.flat().length} payments signed, flooding for ${seconds} s\n`);
    const health = pollHealth(server.url);
    const start = performance.now();
    const deadline = start + seconds * 1000;
    const caller = async (index: number) => {
      const which = index % inputs.length;
      const input = inputs[which]!;
      let payment: string | undefined;
      while (performance.now() < deadline) {
        payment ??= pools[which]!.pop();
        if (payment === undefined) break;
        const res = await fetch(server.url + input.path, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'payment-signature': payment },
          body: input.body,
          // A caller gives up after BENCH_FLOOD_CALL_TIMEOUT_MS (default 60 s): counted as failed ("0 network").
          signal: AbortSignal.timeout(Number(process.env.BENCH_FLOOD_CALL_TIMEOUT_MS ?? 60_000)),
        }).catch((err: unknown) => ({ status: 0, error: String(err) }));
        const status = res.status;
        const code =
          'json' in res
            ? ((await res.json().catch(() => ({}))) as { error?: { code?: string } }).error?.code
            : 'network';
        const key = `${status}${code ? ` ${code}` : ''}`;
        answers[key] = (answers[key] ?? 0) + 1;
        if (status === 503 && code === 'tool_busy') {
          // Refused before the payment was read: the same payment is sent again after Retry-After.
          busy++;
          const wait = 'headers' in res ? Number(res.headers.get('retry-after') ?? 1) : 1;
          await new Promise((r) => setTimeout(r, Math.min(wait, 1) * 1000));
          continue;
        }
        payment = undefined;
        if (status === 200) {
          ok++;
          okByTool[which]!++;
        } else {
          failed++;
          if (failed <= 3) write(`    failed answer: ${status} ${code ?? ''}`);
        }
      }
    };
    await Promise.all(Array.from({ length: connections }, (_, i) => caller(i)));
    const elapsed = (performance.now() - start) / 1000;
    process.stderr.write(`flood: callers done after ${elapsed.toFixed(1)} s\n`);
    const polled = await health.stop();
    const loop = await eventLoop(server.url);
    // Every 200 was paid once, each at its tool's price: the pay-to address received exactly that.
    const received = (await paid.balance(paid.payTo)) - payToBefore;
    const expected = inputs.reduce((sum, _input, i) => sum + BigInt(okByTool[i]!) * amounts[i]!, 0n);
    write(
      `${label} paid flood of the slowest inputs (password-strength 256 l33t characters, solidity-scan 510 KB of rule-dense lines), ${connections} paying callers, ${elapsed.toFixed(1)} s, /healthz every 10 ms from another process`,
    );
    write(
      `    /healthz p50 ${pct(polled.times, 50).toFixed(1)} ms, p99 ${pct(polled.times, 99).toFixed(1)} ms, max ${Math.max(...polled.times).toFixed(0)} ms over ${polled.times.length} answers, ${polled.failed} failed (target p99 <= 50 ms)`,
    );
    write(
      `    the poller's own 10 ms timer: late by p50 ${pct(polled.lags, 50).toFixed(1)} ms, p99 ${pct(polled.lags, 99).toFixed(1)} ms, max ${Math.max(...polled.lags).toFixed(0)} ms (a starved poller, not the server)`,
    );
    write(
      `    server's own event loop (its 20 ms timer): max delay ${(loop.maxSeconds * 1000).toFixed(0)} ms, ${loop.over50ms - loopBefore.over50ms} of ${loop.count - loopBefore.count} samples late by more than 50 ms`,
    );
    write(
      `    paid ${(ok / elapsed).toFixed(2)} req/s (${ok} paid calls answered 200), paying callers failed: ${failed}, refused busy before payment (then retried): ${busy}; answers ${JSON.stringify(answers)}`,
    );
    write(`    pay-to received ${received} units for ${ok} paid answers (expected ${expected})`);
    return received === expected;
  } finally {
    await server.stop();
    await paid.stop();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (!(await runFlood())) process.exitCode = 1;
}
