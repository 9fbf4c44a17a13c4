import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { processOwner } from '../../../src/payments/batch/owner.js';

const linux = existsSync('/proc/self/stat');

/** The start time (clock ticks after boot) of a running process, from its /proc stat line. */
function startOf(pid: number): string {
  const line = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return line.slice(line.lastIndexOf(')') + 2).split(' ')[19]!;
}

/** This process's name with another PID and start time in it. */
function nameOf(token: string, pid: number, start: string): string {
  const [version, place] = token.split(':');
  return [version, place, pid, start].join(':');
}

/** A child process that waits for its stdin to close; resolves once it has exited. */
function child() {
  const proc = spawn(process.execPath, [
    '-e',
    'process.stdin.resume(); process.stdin.on("end", () => process.exit(0))',
  ]);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return { pid: proc.pid!, stop: () => (proc.stdin.end(), exited) };
}

describe.runIf(linux)('the holder of a voucher claim or reservation (Linux /proc)', () => {
  it('names this process by user, boot, PID namespace, PID and start time, and never calls it gone', () => {
    const owner = processOwner();
    expect(owner.token).toMatch(/^proc1:[0-9]+\.[0-9a-f-]{36}\.[0-9]+:[0-9]+:[0-9]+$/);
    expect(owner.token!.split(':')[2]).toBe(String(process.pid));
    expect(owner.gone(owner.token)).toBe(false);
  });

  it('calls a holder gone once its process has exited, and not while it runs', async () => {
    const owner = processOwner();
    const other = child();
    const name = nameOf(owner.token!, other.pid, startOf(other.pid));
    expect(owner.gone(name)).toBe(false);
    await other.stop();
    expect(owner.gone(name)).toBe(true);
  });

  it('calls gone a holder whose PID now belongs to a process that started at another time', () => {
    const owner = processOwner();
    const earlier = String(Number(startOf(process.pid)) - 1);
    expect(owner.gone(nameOf(owner.token!, process.pid, earlier))).toBe(true);
  });

  it('cannot tell — so never calls gone — a holder of another machine, boot, container or user, or a malformed name', async () => {
    const owner = processOwner();
    const other = child();
    const start = startOf(other.pid);
    await other.stop();
    const [version, place] = owner.token!.split(':');
    const [uid, boot, namespace] = place!.split('.');
    const elsewhere = [
      `${uid}.00000000-0000-4000-8000-000000000000.${namespace}`, // another boot or machine
      `${uid}.${boot}.1`, // another PID namespace (container)
      `${Number(uid) + 1}.${boot}.${namespace}`, // another user
    ];
    for (const p of elsewhere) expect(owner.gone([version, p, other.pid, start].join(':'))).toBe(false);
    for (const bad of [
      undefined,
      '',
      'proc0:x:1:1',
      `${version}:${place}:0:1`,
      `${version}:${place}:x:1`,
      `${version}:${place}:${other.pid}:${start}:extra`,
    ])
      expect(owner.gone(bad)).toBe(false);
  });

  it('names nothing and judges nothing where the place cannot be read (no /proc)', () => {
    const owner = processOwner(null);
    expect(owner.token).toBeUndefined();
    expect(owner.gone(processOwner().token)).toBe(false);
  });
});
