import { describe, expect, it } from 'vitest';
import type { PaidCallEvent } from '../../src/pipeline/invoke.js';
import { createLogger } from '../../src/shared/log.js';
import { CallTracker, createCallObserver, logPaidCall } from '../../src/observe/observe.js';

const ended = (over: Partial<PaidCallEvent> = {}): PaidCallEvent => ({
  type: 'paid',
  tool: 'annuity',
  transport: 'http',
  outcome: 'settled',
  totalMs: 3,
  ...over,
});

describe('CallTracker', () => {
  it('drains at once when nothing runs, and when the last running call ends', async () => {
    const calls = new CallTracker();
    expect(await calls.drain(0)).toBe(true);
    calls.observe({ type: 'started', tool: 'annuity' });
    calls.observe({ type: 'started', tool: 'smm-quote' });
    expect(calls.inFlight).toBe(2);
    const drained = calls.drain(60_000);
    calls.observe(ended());
    calls.observe({ type: 'free', tool: 'smm-quote', outcome: 'success', totalMs: 1 });
    expect(await drained).toBe(true);
    expect(calls.inFlight).toBe(0);
  });

  it('gives up when the time limit passes first', async () => {
    const calls = new CallTracker();
    calls.observe({ type: 'started', tool: 'annuity' });
    expect(await calls.drain(10)).toBe(false);
    expect(calls.inFlight).toBe(1);
  });
});

describe('the paid-call log line', () => {
  it('is info for normal outcomes and warn for failures the operator should look at, never with the event type', () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = createLogger('info', {
      write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
    });
    const cases: Array<[Partial<PaidCallEvent>, string]> = [
      [{ outcome: 'settled' }, 'info'],
      [{ outcome: 'payment_required' }, 'info'],
      [{ outcome: 'replayed' }, 'info'],
      [{ outcome: 'rejected', reason: 'invalid_exact_evm_payload_signature' }, 'info'],
      [{ outcome: 'rejected', reason: 'facilitator_unavailable' }, 'warn'],
      [{ outcome: 'error', reason: 'invalid_input' }, 'info'],
      [{ outcome: 'error', reason: 'cancelled' }, 'info'],
      [{ outcome: 'error', reason: 'upstream_timeout' }, 'warn'],
      [{ outcome: 'settlement_failed', reason: 'insufficient_funds' }, 'warn'],
      [{ outcome: 'pending' }, 'warn'],
    ];
    for (const [over] of cases) logPaidCall(log, ended(over));
    expect(lines.map((l) => l.level)).toEqual(cases.map(([, level]) => level));
    expect(lines.every((l) => l.msg === 'paid call' && !('type' in l))).toBe(true);
  });

  it('names the protocol the payment came in, x402 or mpp', () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = createLogger('info', {
      write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
    });
    logPaidCall(log, ended({ protocol: 'mpp', network: 'eip155:84532', amount: '1000' }));
    logPaidCall(log, ended({ protocol: 'x402', outcome: 'rejected', reason: 'invalid_exact_evm_payload_signature' }));
    expect(lines.map((l) => [l.protocol, l.outcome])).toEqual([
      ['mpp', 'settled'],
      ['x402', 'rejected'],
    ]);
    expect(lines[0]).toMatchObject({ tool: 'annuity', transport: 'http', network: 'eip155:84532', amount: '1000' });
  });
});

describe('the call observer', () => {
  it('logs calls that carried a payment and leaves calls without one (probes) to the metrics', () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = createLogger('info', {
      write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
    });
    const seen: string[] = [];
    const observe = createCallObserver(log, [
      { observe: (e) => void seen.push(e.type === 'paid' ? e.outcome : e.type) },
    ]);
    observe(ended({ outcome: 'payment_required' }));
    observe(ended({ outcome: 'settled' }));
    expect(seen).toEqual(['payment_required', 'settled']);
    expect(lines.map((l) => l.outcome)).toEqual(['settled']);
  });
});
