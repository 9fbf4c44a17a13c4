/**
 * Start-up figures of the paid comparison: time from spawn to the first 402 on POST /api/annuity (the bench polls in
 * a tight loop) and resident memory once the process has been idle for a moment, for Tollbooth's CLI, the official
 * @x402/express server and a bare express process; the three kinds start in turn, `starts` times each.
 */
import { median, rssMb, startProc, type ProcSpec } from './paid-procs.js';

/** The value below which a share `q` (0–1) of the values lie, by linear interpolation between the sorted values. */
function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  return sorted[low]! + (sorted[Math.min(low + 1, sorted.length - 1)]! - sorted[low]!) * (at - low);
}

/** `median (p25–p75)` of a series, to `digits` decimals. */
const spread = (values: number[], digits: number) =>
  `${median(values).toFixed(digits)} (p25–p75 ${quantile(values, 0.25).toFixed(digits)}–${quantile(values, 0.75).toFixed(digits)})`;

/** Medians (and all values) of one kind of server. */
export interface StartupFigures {
  name: string;
  firstAnswerMs: number[];
  idleRssMb: number[];
}

/** How long a started server is left idle before its RSS is read. */
const IDLE_MS = 1000;

/** Starts each spec `starts` times (alternating), recording first-402 time and idle RSS; stops each before the next. */
export async function measureStartups(specs: Array<() => ProcSpec>, starts: number): Promise<StartupFigures[]> {
  const figures: StartupFigures[] = [];
  for (let round = 0; round < starts; round++) {
    for (const [i, make] of specs.entries()) {
      const proc = await startProc(make());
      const f = (figures[i] ??= { name: proc.name, firstAnswerMs: [], idleRssMb: [] });
      f.firstAnswerMs.push(proc.firstAnswerMs);
      await new Promise((r) => setTimeout(r, IDLE_MS));
      f.idleRssMb.push(rssMb(proc.pid));
      await proc.stop();
    }
  }
  return figures;
}

/** Lines for the start-up table. */
export function describeStartups(figures: StartupFigures[]): string[] {
  return figures.map(
    (f) =>
      `${f.name.padEnd(14)} first 402 ${spread(f.firstAnswerMs, 0)} ms; idle RSS ${spread(f.idleRssMb, 1)} MB (${f.firstAnswerMs.length} starts)`,
  );
}
