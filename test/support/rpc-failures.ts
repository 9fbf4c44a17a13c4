import { expect, it } from 'vitest';
import type { RpcFault } from './upstreams/flaky-rpc.js';

/** The faults every rail is tested against: throttled, failing, garbage, a wrong JSON-RPC answer, no answer. */
export const RPC_FAULTS: readonly RpcFault[] = ['429', '500', 'garbage', 'wrong', 'hang'];

/** What a paid call came to: HTTP status, the refusal code (x402 `error` string or `{ error: { code } }`), whether output came back. */
export interface AnswerSummary {
  status: number;
  code: string;
  delivered: boolean;
}

/** Reads a paid call's answer; `outputKey` is a field only the tool's output has (e.g. `presentValue`). */
export async function callOutcome(res: Response, outputKey = 'presentValue'): Promise<AnswerSummary> {
  const text = await res.text();
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = {};
  }
  const error = json.error as string | { code?: string } | undefined;
  const code = typeof error === 'string' ? error : (error?.code ?? '');
  return { status: res.status, code, delivered: outputKey in json };
}

/** Collects the unhandled rejections of this test process (vitest reports them too; this makes a test fail on its own). */
export function watchUnhandledRejections(): { seen: unknown[]; stop(): void } {
  const seen: unknown[] = [];
  const record = (reason: unknown) => void seen.push(reason);
  process.on('unhandledRejection', record);
  return { seen, stop: () => process.off('unhandledRejection', record) };
}

/** Asserts a refused call: an error status with a code, and no output. */
export function expectRefused(outcome: AnswerSummary, statuses: readonly number[], label: string): void {
  expect(statuses, `${label}: ${JSON.stringify(outcome)}`).toContain(outcome.status);
  expect(outcome.code, label).not.toBe('');
  expect(outcome.delivered, label).toBe(false);
}

/** One in-process rail behind a flaky RPC, as the shared failure suite drives it. */
export interface RailUnderTest {
  rpc: import('./upstreams/flaky-rpc.js').FlakyRpc;
  /** Server base URL (for /healthz). */
  url: string;
  /** The tool's price in the asset's smallest units. */
  price: bigint;
  /** A new payment of the one payer the suite uses. */
  pay(): Promise<unknown>;
  /** Sends a paid call with `payment`. */
  send(payment: unknown): Promise<Response>;
  /** The payer's balance. */
  balance(): Promise<bigint>;
  /** How often the tool's handler ran. */
  runs(): number;
  /** Requests that submit a transaction, and requests that follow one after its submission. */
  submit: (req: import('./upstreams/flaky-rpc.js').RpcRequestInfo) => boolean;
  confirm: (req: import('./upstreams/flaky-rpc.js').RpcRequestInfo) => boolean;
}

/** The reasons of a settlement whose outcome is open: broadcast with a known hash, or no answer and no hash (docs/protocol.md). */
const OPEN_SETTLEMENT: readonly string[] = ['settlement_pending', 'settlement_outcome_unknown'];

/** Sends the same payment while its settlement is open (`409 settlement_pending` or `settlement_outcome_unknown`; an agent honouring Retry-After), at most `tries` times. */
export async function untilDecided(rail: RailUnderTest, payment: unknown, tries = 40): Promise<AnswerSummary> {
  let outcome = await callOutcome(await rail.send(payment));
  for (let i = 1; i < tries && outcome.status === 409 && OPEN_SETTLEMENT.includes(outcome.code); i++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    outcome = await callOutcome(await rail.send(payment));
  }
  return outcome;
}

/** After the RPC healed: the payment buys its output (once), is charged once in all, and a copy buys nothing more. */
export async function expectSettledOnceWhenHealed(
  rail: RailUnderTest,
  payment: unknown,
  before: bigint,
  label: string,
): Promise<void> {
  rail.rpc.heal();
  expect(await untilDecided(rail, payment), label).toMatchObject({ status: 200, delivered: true });
  expect(await rail.balance(), label).toBe(before - rail.price);
  const runs = rail.runs();
  const again = await untilDecided(rail, payment);
  expect([200, 402], label).toContain(again.status);
  if (again.status === 402) expect(again.code, label).toBe('payment_already_used');
  expect(rail.runs(), label).toBe(runs);
  expect(await rail.balance(), label).toBe(before - rail.price);
}

const healthz = async (rail: RailUnderTest) => (await fetch(rail.url + '/healthz')).status;

/**
 * The failure cases every in-process rail passes, against its RPC behind a flaky proxy: each fault (429, 500, garbage,
 * a wrong JSON-RPC answer, a hang) during verification, during submission and after submission, and an answer lost
 * after the node took the transaction. Each time: a clear error, no output unless settled, nothing charged twice, the
 * payment never spent twice, the server still up, and no unhandled rejection.
 */
export function rpcFailureSuite(rail: () => RailUnderTest, unhandled: () => unknown[]): void {
  faultsBeforeSettling(rail, unhandled);
  faultsAfterSubmitting(rail, unhandled);
}

/** The cases of faults during verification and during submission (see `rpcFailureSuite`). */
function faultsBeforeSettling(rail: () => RailUnderTest, unhandled: () => unknown[]): void {
  it('answers 502 facilitator_unavailable to each fault during verification, runs and charges nothing, stays up; the same payment then pays once', async () => {
    const r = rail();
    for (const fault of RPC_FAULTS) {
      const payment = await r.pay();
      const before = await r.balance();
      const runs = r.runs();
      r.rpc.fail(fault);
      expect(await callOutcome(await r.send(payment)), fault).toEqual({
        status: 502,
        code: 'facilitator_unavailable',
        delivered: false,
      });
      expect(r.runs(), fault).toBe(runs);
      expect(await r.balance(), fault).toBe(before);
      expect(await healthz(r), fault).toBe(200);
      await expectSettledOnceWhenHealed(r, payment, before, fault);
    }
    expect(unhandled()).toEqual([]);
  });

  it('withholds the output and charges nothing when submitting fails (402 facilitator_unavailable or 503 settlement_pending); once the RPC is back the same payment is settled once', async () => {
    const r = rail();
    for (const fault of RPC_FAULTS) {
      const payment = await r.pay();
      const before = await r.balance();
      r.rpc.fail(fault, r.submit);
      const first = await callOutcome(await r.send(payment));
      expectRefused(first, [402, 503], fault);
      expect(['facilitator_unavailable', ...OPEN_SETTLEMENT], fault).toContain(first.code);
      expect(await r.balance(), fault).toBe(before);
      expect(await healthz(r), fault).toBe(200);
      await expectSettledOnceWhenHealed(r, payment, before, fault);
    }
    expect(unhandled()).toEqual([]);
  });
}

/** The cases of an answer lost after the node took the transaction, and of a submission that cannot be followed. */
function faultsAfterSubmitting(rail: () => RailUnderTest, unhandled: () => unknown[]): void {
  it('settles from the chain when the node took the transaction but its answer was lost: the output once, charged once', async () => {
    const r = rail();
    const payment = await r.pay();
    const before = await r.balance();
    const runs = r.runs();
    r.rpc.fail('lose', r.submit, 1);
    expect(await callOutcome(await r.send(payment))).toMatchObject({ status: 200, delivered: true });
    expect(await r.balance()).toBe(before - r.price);
    expect(await callOutcome(await r.send(payment))).toEqual({
      status: 402,
      code: 'payment_already_used',
      delivered: false,
    });
    expect(r.runs()).toBe(runs + 1);
    expect(await r.balance()).toBe(before - r.price);
    r.rpc.heal();
    expect(unhandled()).toEqual([]);
  });

  it('answers 503 with an open settlement (settlement_pending, or settlement_outcome_unknown when the settle call ran out of time first) when the submitted transaction cannot be followed, and gives the same payment its output once the RPC is back, without running or charging again', async () => {
    const r = rail();
    for (const fault of RPC_FAULTS) {
      const payment = await r.pay();
      const before = await r.balance();
      const runs = r.runs();
      r.rpc.fail(fault, r.confirm);
      const open = await callOutcome(await r.send(payment));
      expect(open, fault).toMatchObject({ status: 503, delivered: false });
      expect(OPEN_SETTLEMENT, fault).toContain(open.code);
      expect(await healthz(r), fault).toBe(200);
      await expectSettledOnceWhenHealed(r, payment, before, fault);
      expect(r.runs(), fault).toBe(runs + 1);
    }
    expect(unhandled()).toEqual([]);
  });
}
