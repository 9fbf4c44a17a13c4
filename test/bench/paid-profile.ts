/**
 * Reading a V8 `.cpuprofile` (written by `node --cpu-prof`): self time per function and per package or file, counted
 * only for the samples taken inside a time window (the timed run), so start-up and warm-up do not show.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** One row of a self-time table. */
export interface SelfTime {
  name: string;
  ms: number;
  share: number;
}

/** Where the profiled process spent its CPU inside the window. */
export interface ProfileSummary {
  /** Sampled time inside the window, in ms, idle excluded. */
  busyMs: number;
  idleMs: number;
  functions: SelfTime[];
  packages: SelfTime[];
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SPECIAL = new Set(['(program)', '(garbage collector)', '(idle)', '(root)']);

function shortUrl(url: string): string {
  if (url.startsWith('file://')) return relative(ROOT, fileURLToPath(url));
  return url;
}

/** The package of a script (`viem`, `@x402/core`), our own file (`dist/src/…`), a node internal, or the V8 bucket. */
function packageOf(frame: CallFrame): string {
  if (SPECIAL.has(frame.functionName) && !frame.url) return frame.functionName;
  if (!frame.url) return '(V8 builtins and native code)';
  const url = shortUrl(frame.url);
  const at = url.lastIndexOf('node_modules/');
  if (at >= 0) {
    const parts = url.slice(at + 'node_modules/'.length).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  return url;
}

function top(totals: Map<string, number>, busy: number, count: number): SelfTime[] {
  return [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, us]) => ({ name, ms: us / 1000, share: busy > 0 ? us / 1000 / busy : 0 }));
}

/** Self time by function (name + file:line) and by package/file for the samples between `fromUs` and `toUs`. */
export function summarizeProfile(
  profile: CpuProfile,
  window: { fromUs: number; toUs: number },
  counts = { functions: 15, packages: 10 },
): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  let idle = 0;
  let busy = 0;
  let t = profile.startTime;
  const times: number[] = [];
  for (const delta of profile.timeDeltas) times.push((t += delta));
  // A sample stands for the time until the next one, but at most twice the usual interval: on a busy machine the
  // sampler itself waits for a core, and such a gap (often tens of ms) says nothing about what ran in it.
  const sorted = [...profile.timeDeltas].sort((a, b) => a - b);
  const cap = 2 * (sorted[Math.floor(sorted.length / 2)] ?? 1000);
  for (let i = 0; i < profile.samples.length; i++) {
    const at = times[i]!;
    if (at < window.fromUs || at > window.toUs) continue;
    const duration = Math.min(cap, (i + 1 < times.length ? times[i + 1]! : profile.endTime) - at);
    const frame = byId.get(profile.samples[i]!);
    if (!frame || duration <= 0) continue;
    if (frame.functionName === '(idle)') {
      idle += duration;
      continue;
    }
    busy += duration;
    const name = `${frame.functionName || '(anonymous)'}${frame.url ? ` ${shortUrl(frame.url)}:${frame.lineNumber + 1}` : ''}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + duration);
    const pkg = packageOf(frame);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + duration);
  }
  return {
    busyMs: busy / 1000,
    idleMs: idle / 1000,
    functions: top(byFunction, busy / 1000, counts.functions),
    packages: top(byPackage, busy / 1000, counts.packages),
  };
}

/** Reads the one `.cpuprofile` a process wrote into `dir`. */
export function readProfile(dir: string): CpuProfile {
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no .cpuprofile in ${dir} (the process must exit cleanly to write it)`);
  return JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
}

/** The summary as indented lines. */
export function describeProfile(summary: ProfileSummary): string[] {
  const row = (r: SelfTime) =>
    `${r.ms.toFixed(0).padStart(7)} ms ${(r.share * 100).toFixed(1).padStart(5)}%  ${r.name}`;
  return [
    `sampled inside the timed run: ${summary.busyMs.toFixed(0)} ms busy, ${summary.idleMs.toFixed(0)} ms idle (each sample counted for at most 2 sampling intervals; shares are of busy time)`,
    `top ${summary.functions.length} functions by self time:`,
    ...summary.functions.map((r) => '  ' + row(r)),
    `top ${summary.packages.length} packages/files by self time:`,
    ...summary.packages.map((r) => '  ' + row(r)),
  ];
}
