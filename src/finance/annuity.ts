/**
 * Annuity values computed without intermediate overflow or underflow: every answer that is a finite double comes back
 * to within a few parts in 10^13 of the exact value (the error of n·ln(1+r) in double precision), however large
 * (1+r)^n or however small r.
 */

/** A nonzero finite double as mantissa × 2^exponent, the mantissa's magnitude in [0.5, 1). */
interface Scaled {
  readonly mantissa: number;
  readonly exponent: number;
}

/** 2^e for an integer e in [-1074, 1023], exactly. */
function pow2(e: number): number {
  return e >= -1022 ? 2 ** e : 2 ** (e + 100) * 2 ** -100;
}

/** `x` split into mantissa and power of two (each scaling step below is exact). */
function split(x: number): Scaled {
  let exponent = Math.floor(Math.log2(Math.abs(x))) + 1;
  const half = Math.trunc(exponent / 2);
  let mantissa = x * pow2(-half) * pow2(half - exponent);
  while (Math.abs(mantissa) >= 1) [mantissa, exponent] = [mantissa / 2, exponent + 1];
  while (Math.abs(mantissa) < 0.5) [mantissa, exponent] = [mantissa * 2, exponent - 1];
  return { mantissa, exponent };
}

/** mantissa × 2^exponent rounded once (Infinity beyond the largest double, 0 below the smallest). */
function join(mantissa: number, exponent: number): number {
  if (exponent > 1023) return exponent > 2100 ? mantissa * Infinity : mantissa * 2 ** 1000 * 2 ** (exponent - 1000);
  if (exponent >= -1022) return mantissa * 2 ** exponent;
  if (exponent < -1217) return mantissa * 0;
  return mantissa * 2 ** (exponent + 200) * 2 ** -200;
}

/** The product of the factors (each a plain double or an already split one), rounded once at the end. */
function product(factors: readonly (number | Scaled)[]): number {
  let mantissa = 1;
  let exponent = 0;
  for (const factor of factors) {
    if (factor === 0) return 0;
    const part = typeof factor === 'number' ? split(factor) : factor;
    const next = split(mantissa * part.mantissa);
    mantissa = next.mantissa;
    exponent += next.exponent + part.exponent;
  }
  return join(mantissa, exponent);
}

// ln 2 in two parts (fdlibm's): k × LN2_HI is exact for the k used here.
const LN2_HI = 6.9314718036912381649e-1;
const LN2_LO = 1.90821492927058770002e-10;

/** (e^g − 1) / g, split, for any finite g (1 at g = 0); e^g is scaled by powers of two where it would overflow. */
function expm1Ratio(g: number): Scaled {
  if (g === 0) return { mantissa: 0.5, exponent: 1 };
  if (g < 709) return split(Math.expm1(g) / g);
  const k = Math.round(g / Math.LN2);
  const reduced = g - k * LN2_HI - k * LN2_LO;
  const part = split((Math.exp(reduced) * -Math.expm1(-g)) / g);
  return { mantissa: part.mantissa, exponent: part.exponent + k };
}

const SMALLEST_NORMAL = 2 ** -1022;
const normal = (x: number) => Number.isFinite(x) && (x === 0 || Math.abs(x) >= SMALLEST_NORMAL);

/**
 * The direct form, payment × expm1(±n·ln(1+r)) / r (× (1+r) when due), which rounds least, when none of its steps
 * overflows or leaves the normal range; undefined otherwise (then the scaled form below answers).
 */
function direct(payment: number, r: number, n: number, due: boolean) {
  if (!normal(r) || r === 0) return undefined;
  const g = n * Math.log1p(r);
  const grownBy = payment * Math.expm1(g);
  const shrunkBy = payment * -Math.expm1(-g);
  const dueFactor = due ? 1 + r : 1;
  const futureValue = (grownBy / r) * dueFactor;
  const presentValue = (shrunkBy / r) * dueFactor;
  const steps = [grownBy, shrunkBy, futureValue, presentValue];
  if (!steps.every(normal) || (payment !== 0 && (futureValue === 0 || presentValue === 0))) return undefined;
  return { presentValue, futureValue };
}

/** Present and future value of `n` payments of `payment` at rate `r` per period, or undefined if one overflows. */
export function annuityValues(
  payment: number,
  r: number,
  n: number,
  due: boolean,
): { presentValue: number; futureValue: number } | undefined {
  const plain = direct(payment, r, n, due);
  if (plain) return plain;
  let presentValue: number;
  let futureValue: number;
  if (r === 0) {
    presentValue = futureValue = payment * n;
  } else {
    // FV = payment × ((1+r)^n − 1)/r = payment × n × (e^g − 1)/g × ln(1+r)/r with g = n·ln(1+r); PV the same with −g.
    const g = n * Math.log1p(r);
    const rateRatio = Math.log1p(r) / r;
    const dueFactor = due ? 1 + r : 1;
    futureValue = product([payment, n, expm1Ratio(g), rateRatio, dueFactor]);
    presentValue = product([payment, n, expm1Ratio(-g), rateRatio, dueFactor]);
  }
  if (!Number.isFinite(presentValue) || !Number.isFinite(futureValue)) return undefined;
  return { presentValue, futureValue };
}
