import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/shared/errors.js';
import { annuity } from '../../tools/annuity.js';
import { testContext } from '../support/context.js';

/** An exact rational: num / den with den > 0. */
type Rational = [bigint, bigint];

/** A finite double as the exact rational it is (its mantissa over a power of two). */
function exact(x: number): Rational {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const sign = bits >> 63n ? -1n : 1n;
  const field = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  const mantissa = field === 0 ? fraction : fraction | (1n << 52n);
  const power = (field === 0 ? 1 : field) - 1075;
  return power >= 0 ? [sign * (mantissa << BigInt(power)), 1n] : [sign * mantissa, 1n << BigInt(-power)];
}

/** The exact present and future value, by the closed form in rational arithmetic (no rounding anywhere). */
function reference(payment: number, rate: number, n: number, due: boolean): { pv: Rational; fv: Rational } {
  const [pn, pd] = exact(payment);
  if (rate === 0) return { pv: [pn * BigInt(n), pd], fv: [pn * BigInt(n), pd] };
  const [a, d] = exact(rate);
  const qn = (d + a) ** BigInt(n);
  const dn = d ** BigInt(n);
  const [dueNum, dueDen] = due ? [d + a, d] : [1n, 1n];
  const normalise = ([num, den]: Rational): Rational => (den < 0n ? [-num, -den] : [num, den]);
  return {
    fv: normalise([pn * (qn - dn) * d * dueNum, pd * dn * a * dueDen]),
    pv: normalise([pn * (qn - dn) * d * dueNum, pd * qn * a * dueDen]),
  };
}

const abs = (x: bigint) => (x < 0n ? -x : x);
const MAX: Rational = exact(Number.MAX_VALUE);
const SLACK = 10n ** 12n;

/** Whether the exact value lies beyond the largest double (by more than 1e-12 relative: the boundary band may go either way). */
function overflows([num, den]: Rational): boolean {
  return abs(num) * MAX[1] * SLACK > MAX[0] * den * (SLACK + 1n);
}

/** Whether `got` is within 1e-12 relative (plus the smallest subnormal, 2^-1074) of the exact value. */
function close(got: number, [num, den]: Rational): boolean {
  const [gn, gd] = exact(got);
  const tiny = 1n << 1074n;
  return abs(gn * den - num * gd) * SLACK * tiny <= abs(num) * gd * tiny + SLACK * den * gd;
}

/** True if the exact value is within 1e-12 relative of the largest double (either answer is right there). */
function nearMax(value: Rational): boolean {
  const [num, den] = value;
  return abs(num) * MAX[1] * SLACK >= MAX[0] * den * (SLACK - 1n) && !overflows(value);
}

async function call(payment: number, ratePerPeriod: number, periods: number, type: 'ordinary' | 'due') {
  return annuity.handler(annuity.input.parse({ payment, ratePerPeriod, periods, type }), testContext());
}

const PAYMENTS = [0, 5e-324, 1e-310, 1e-300, 0.01, 1, 100, -250, 1e300, 1e308];
const RATES = [5e-324, 1e-310, 2e-308, 1e-200, 1e-12, 1e-6, 0.05, 0.5, 3, 1e6, 1e300, -1e-12, -0.05, -0.5, -0.999];
const PERIODS = [1, 2, 12, 360];

describe('annuity values against an exact rational reference', () => {
  it('match the exact closed form over a grid of payments, rates (5e-324 to 1e300, negative too) and periods', async () => {
    const failures: string[] = [];
    for (const rate of RATES) {
      for (const n of PERIODS) {
        for (const type of ['ordinary', 'due'] as const) {
          for (const payment of PAYMENTS) {
            const want = reference(payment, rate, n, type === 'due');
            const label = `payment ${payment}, rate ${rate}, periods ${n}, ${type}`;
            const mayOverflow = overflows(want.pv) || overflows(want.fv);
            try {
              const got = await call(payment, rate, n, type);
              if (mayOverflow && !nearMax(want.pv) && !nearMax(want.fv))
                failures.push(`${label}: finite, expected overflow`);
              else if (!close(got.presentValue, want.pv)) failures.push(`${label}: presentValue ${got.presentValue}`);
              else if (!close(got.futureValue, want.fv)) failures.push(`${label}: futureValue ${got.futureValue}`);
            } catch (error) {
              expect(error).toBeInstanceOf(ToolError);
              if (!mayOverflow) failures.push(`${label}: reported as overflow`);
            }
          }
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('returns payment × periods for rates too small to square (below ~2.2e-308)', async () => {
    for (const rate of [5e-324, 1e-310, -1e-310]) {
      const want = { presentValue: 0.01 * 12, futureValue: 0.01 * 12, type: 'ordinary' };
      expect(await call(0.01, rate, 12, 'ordinary'), `${rate}`).toEqual(want);
    }
  });

  it('rounds an everyday annuity as well as the direct formula does (100 at 5% for 10 periods: the nearest double)', async () => {
    // Exactly 1257.78925355488282879…; the nearest double prints as 1257.7892535548829.
    const { futureValue } = await call(100, 0.05, 10, 'ordinary');
    expect(futureValue).toBe(1257.7892535548829);
    expect(close(futureValue, reference(100, 0.05, 10, false).fv)).toBe(true);
  });

  it('returns 0 for a zero payment even when (1+r)^n overflows', async () => {
    expect(await call(0, 1e300, 360, 'due')).toEqual({ presentValue: 0, futureValue: 0, type: 'due' });
  });

  it('returns a finite answer whose intermediate (1+r)^n would overflow', async () => {
    expect(await call(1e308, 3, 1, 'ordinary')).toEqual({
      presentValue: 2.5e307,
      futureValue: 1e308,
      type: 'ordinary',
    });
    const small = await call(1e-300, 1e6, 60, 'ordinary');
    expect(close(small.futureValue, reference(1e-300, 1e6, 60, false).fv)).toBe(true);
  });
});
