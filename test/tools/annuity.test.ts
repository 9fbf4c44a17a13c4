import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/shared/errors.js';
import { annuity } from '../../tools/annuity.js';
import { testContext } from '../support/context.js';

async function call(body: unknown) {
  const result = await annuity.handler(annuity.input.parse(body), testContext());
  return annuity.output.parse(result);
}

function rejectedPaths(body: unknown): string[] {
  const parsed = annuity.input.safeParse(body);
  expect(parsed.success).toBe(false);
  return parsed.error?.issues.map((issue) => issue.path.join('.')) ?? [];
}

describe('annuity', () => {
  it('computes the present value of an ordinary annuity in closed form', async () => {
    const out = await call({ payment: 100, ratePerPeriod: 0.05, periods: 10 });
    expect(out.presentValue).toBeCloseTo(772.1734929, 6);
    expect(out.type).toBe('ordinary');
  });

  it('computes the future value of an ordinary annuity in closed form', async () => {
    const out = await call({ payment: 100, ratePerPeriod: 0.05, periods: 10, type: 'ordinary' });
    expect(out.futureValue).toBeCloseTo(1257.789254, 5);
  });

  it('values an annuity due as the ordinary annuity times (1 + r)', async () => {
    const out = await call({ payment: 100, ratePerPeriod: 0.05, periods: 10, type: 'due' });
    expect(out.presentValue).toBeCloseTo(772.1734929 * 1.05, 6);
    expect(out.futureValue).toBeCloseTo(1257.789254 * 1.05, 5);
    expect(out.type).toBe('due');
  });

  it('returns payment times periods for both values when the rate is zero', async () => {
    for (const type of ['ordinary', 'due'] as const) {
      const out = await call({ payment: 250, ratePerPeriod: 0, periods: 12, type });
      expect(out).toEqual({ presentValue: 3000, futureValue: 3000, type });
    }
  });

  it('stays accurate for tiny rates, converging on the zero-rate answer', async () => {
    const out = await call({ payment: 100, ratePerPeriod: 1e-12, periods: 10 });
    expect(out.presentValue).toBeCloseTo(1000, 6);
    expect(out.futureValue).toBeCloseTo(1000, 6);
  });

  it('handles negative rates above -100%', async () => {
    const out = await call({ payment: 100, ratePerPeriod: -0.05, periods: 10 });
    expect(out.presentValue).toBeCloseTo((100 * (1 - 0.95 ** -10)) / -0.05, 6);
    expect(out.futureValue).toBeCloseTo((100 * (0.95 ** 10 - 1)) / -0.05, 6);
  });

  it('rejects a result that overflows to a non-finite number with invalid_input', async () => {
    const promise = call({ payment: 1e300, ratePerPeriod: 1e6, periods: 100_000 });
    await expect(promise).rejects.toBeInstanceOf(ToolError);
    await expect(promise).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('rejects zero, fractional and negative periods', () => {
    expect(rejectedPaths({ payment: 100, ratePerPeriod: 0.05, periods: 0 })).toContain('periods');
    expect(rejectedPaths({ payment: 100, ratePerPeriod: 0.05, periods: 1.5 })).toContain('periods');
    expect(rejectedPaths({ payment: 100, ratePerPeriod: 0.05, periods: -3 })).toContain('periods');
  });

  it('rejects an unknown annuity type', () => {
    expect(rejectedPaths({ payment: 100, ratePerPeriod: 0.05, periods: 10, type: 'bogus' })).toContain('type');
  });

  it('rejects a rate of -100% or lower and missing required fields', () => {
    expect(rejectedPaths({ payment: 100, ratePerPeriod: -1, periods: 10 })).toContain('ratePerPeriod');
    expect(rejectedPaths({ ratePerPeriod: 0.05, periods: 10 })).toContain('payment');
  });
});
