/**
 * Unpaid figures of the paid comparison: POST /api/annuity without a payment (the 402 that discovery crawlers and
 * first calls get) against Tollbooth's CLI and the official @x402/express server, each in its own process, in short
 * alternating runs so the machine's noise falls on both; the load average is printed with the ratio.
 */
import { loadavg } from 'node:os';
import { cannon, statuses } from './load-harness.js';
import { startProc, type Proc, type ProcSpec } from './paid-procs.js';

/** Requests per second of each run, per server. */
export interface UnpaidFigures {
  name: string;
  rps: number[];
  /** Answers that were not 402, by status. */
  other: Record<string, number>;
}

/** One unpaid run: every request a bare POST (no body, no payment), `seconds` long. */
async function unpaidRun(proc: Proc, connections: number, seconds: number) {
  return cannon({
    url: `${proc.url}/api/annuity`,
    connections,
    duration: seconds,
    requests: [{ method: 'POST', headers: { 'content-length': '0' } }],
  });
}

/** Starts both servers, warms each up for three seconds (the JIT settles), then `runs` alternating runs of `seconds` each. */
export async function measureUnpaid(
  specs: Array<() => ProcSpec>,
  options: { connections: number; seconds: number; runs: number },
): Promise<{ figures: UnpaidFigures[]; load: number[] }> {
  const procs: Proc[] = [];
  try {
    for (const make of specs) procs.push(await startProc(make()));
    for (const proc of procs) await unpaidRun(proc, options.connections, 3);
    const figures = procs.map((p) => ({ name: p.name, rps: [] as number[], other: {} as Record<string, number> }));
    const load: number[] = [];
    for (let run = 0; run < options.runs; run++) {
      for (const [i, proc] of procs.entries()) {
        const result = await unpaidRun(proc, options.connections, options.seconds);
        figures[i]!.rps.push(result.requests.average);
        for (const [code, n] of Object.entries(statuses(result)))
          if (code !== '402') figures[i]!.other[code] = (figures[i]!.other[code] ?? 0) + n;
      }
      load.push(loadavg()[0]!);
    }
    return { figures, load };
  } finally {
    for (const proc of procs) await proc.stop();
  }
}

/** Lines for the unpaid table, ending with ours/official. */
export function describeUnpaid({ figures, load }: { figures: UnpaidFigures[]; load: number[] }): string[] {
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
  const lines = figures.map((f) => {
    const other = Object.keys(f.other).length ? `; NOT 402: ${JSON.stringify(f.other)}` : '';
    return `${f.name.padEnd(14)} ${mean(f.rps).toFixed(0).padStart(6)} req/s (${f.rps.map((r) => r.toFixed(0)).join(', ')})${other}`;
  });
  const [ours, official] = figures;
  if (ours && official)
    lines.push(
      `ours/official: unpaid 402 ${(mean(ours.rps) / mean(official.rps)).toFixed(2)}x (load average ${load.map((l) => l.toFixed(1)).join(', ')})`,
    );
  return lines;
}
