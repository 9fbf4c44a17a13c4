/**
 * Which process holds a voucher's claim and its channel reservation, named so that another process on the same
 * machine can tell for certain that the holder is gone (`kill -9`, a crash): then its claim and reservation are
 * decided at once instead of after the reservation's lease and the claim's age. The name is the user id, the boot,
 * the PID namespace, the PID and the process's start time, all from Linux's /proc: a process that shares all but the
 * last two with the holder sees the holder's PID in its own /proc, and a PID reused by another process starts at
 * another time. Anything else — another machine, container, user or boot, a system without /proc, an unreadable
 * entry — is "cannot tell", and the lease and age rules decide as before. So a holder is never called gone while
 * it runs; at worst one is not known to be gone.
 */
import { readFileSync, readlinkSync } from 'node:fs';

/** This process as a holder, and the judge of other holders' names. */
export interface ProcessOwner {
  /** This process's name; undefined where it cannot be named (no /proc): its holdings then wait out the rules. */
  readonly token: string | undefined;
  /** True only when the holder named `token` provably no longer runs; false when it runs or nobody can tell. */
  gone(token: string | undefined): boolean;
}

const VERSION = 'proc1';

/** The process's state letter and start time (clock ticks after boot) from its /proc stat line. */
function statOf(pid: number | 'self'): { state: string; start: string } | undefined {
  const line = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may itself hold spaces and parentheses.
  const fields = line.slice(line.lastIndexOf(')') + 2).split(' ');
  const [state, start] = [fields[0], fields[19]];
  return state && start && /^[0-9]+$/.test(start) ? { state, start } : undefined;
}

/** This machine, boot, PID namespace and user: holders that share it can be judged through /proc. */
function placeOf(): string | undefined {
  const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  const pidNamespace = /^pid:\[([0-9]+)\]$/.exec(readlinkSync('/proc/self/ns/pid'))?.[1];
  const uid = process.getuid?.();
  if (!/^[0-9a-f-]{36}$/.test(boot) || !pidNamespace || uid === undefined) return undefined;
  return `${uid}.${boot}.${pidNamespace}`;
}

/** This process as a holder (see the module comment); `place` (null: none can be read) is for tests. */
export function processOwner(place: string | null = safely(placeOf) ?? null): ProcessOwner {
  const self = place === null ? undefined : safely(() => statOf('self'));
  const token = place !== null && self ? [VERSION, place, process.pid, self.start].join(':') : undefined;
  return {
    token,
    gone(other) {
      if (!other || !token || other === token) return false;
      const [version, otherPlace, otherPid, otherStart, ...rest] = other.split(':');
      if (version !== VERSION || otherPlace !== place || rest.length > 0) return false;
      if (!/^[1-9][0-9]{0,9}$/.test(otherPid ?? '') || !/^[0-9]+$/.test(otherStart ?? '')) return false;
      return holderGone(Number(otherPid), otherStart!);
    },
  };
}

/** Whether the process `pid` that started at `start` has ended: its /proc entry is gone, reused, or a zombie. */
function holderGone(pid: number, start: string): boolean {
  let stat: { state: string; start: string } | undefined;
  try {
    stat = statOf(pid);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT';
  }
  if (!stat) return false;
  return stat.start !== start || stat.state === 'Z' || stat.state === 'X';
}

/** `read()`, or undefined when it throws (no /proc, no permission). */
function safely<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
