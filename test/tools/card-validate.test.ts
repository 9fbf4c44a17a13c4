import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cardValidate } from '../../tools/card-validate.js';
import { testContext } from '../support/context.js';

async function call(number: string) {
  const result = await cardValidate.handler(cardValidate.input.parse({ number }), testContext());
  return cardValidate.output.parse(result);
}

function rejectionMessage(number: unknown): string | undefined {
  const parsed = cardValidate.input.safeParse({ number });
  expect(parsed.success).toBe(false);
  expect(parsed.error?.issues[0]?.path).toEqual(['number']);
  return parsed.error?.issues[0]?.message;
}

const TEST_NUMBERS: [string, string, number][] = [
  ['4111111111111111', 'visa', 16],
  ['4012888888881881', 'visa', 16],
  ['5555555555554444', 'mastercard', 16],
  ['2223003122003222', 'mastercard', 16],
  ['378282246310005', 'american-express', 15],
  ['371449635398431', 'american-express', 15],
  ['6011111111111117', 'discover', 16],
  ['3056930009020004', 'diners-club', 16],
  ['30569309025904', 'diners-club', 14],
  ['3530111333300000', 'jcb', 16],
  ['6200000000000005', 'unionpay', 16],
  ['6759649826438453', 'maestro', 16],
  ['2200000000000004', 'mir', 16],
  ['6362970000457013', 'elo', 16],
  ['6370950000000005', 'hiper', 16],
  ['6062826786276634', 'hipercard', 16],
];

/** Published test numbers (test/fixtures/cards): [number, brand by its network's published ranges, valid]. */
const PUBLISHED = (
  JSON.parse(readFileSync(new URL('../fixtures/cards/published-test-numbers.json', import.meta.url), 'utf8')) as {
    numbers: [string, string, boolean][];
  }
).numbers;

/** `prefix` padded with zeros to `length` digits, ending in the Luhn check digit (computed here, independently). */
function withCheckDigit(prefix: string, length: number): string {
  const body = prefix.padEnd(length - 1, '0');
  let sum = 0;
  [...body].reverse().forEach((c, i) => {
    const d = Number(c) * (i % 2 === 0 ? 2 : 1);
    sum += d > 9 ? d - 9 : d;
  });
  return body + String((10 - (sum % 10)) % 10);
}

describe('card-validate', () => {
  it.each(PUBLISHED)('names the published test number %s as %s (valid: %s)', async (number, brand, valid) => {
    expect(await call(number)).toEqual({ valid, brand, length: number.length });
  });

  it('does not call numbers of the other schemes starting with 6 (RuPay 60, 627x–629x) maestro', async () => {
    const prefixes = [...Array(100).keys()].map((i) => String(6000 + i)).filter((p) => p !== '6011');
    for (let p = 6271; p <= 6299; p++) prefixes.push(String(p));
    for (const prefix of prefixes) {
      for (const length of [16, 19]) {
        const { brand } = await call(withCheckDigit(prefix, length));
        expect(['unknown', 'unionpay', 'hipercard'], prefix).toContain(brand);
      }
    }
  });

  it('knows Diners Club International numbers starting 3095', async () => {
    expect(await call(withCheckDigit('3095', 14))).toEqual({ valid: true, brand: 'diners-club', length: 14 });
    expect(await call(withCheckDigit('3095', 16))).toEqual({ valid: true, brand: 'diners-club', length: 16 });
  });

  it('accepts the Visa lengths ISO ranges issue (13, 16, 19) and no others', async () => {
    for (const length of [13, 16, 19]) expect((await call(withCheckDigit('4', length))).valid, `${length}`).toBe(true);
    for (const length of [12, 14, 15, 17, 18]) {
      expect(await call(withCheckDigit('4', length))).toEqual({ valid: false, brand: 'visa', length });
    }
  });

  it.each(TEST_NUMBERS)('accepts the standard test number %s as a valid %s card', async (number, brand, length) => {
    expect(await call(number)).toEqual({ valid: true, brand, length });
  });

  it('accepts numbers grouped with spaces or dashes', async () => {
    const expected = { valid: true, brand: 'visa', length: 16 };
    expect(await call('4111 1111 1111 1111')).toEqual(expected);
    expect(await call('4111-1111-1111-1111')).toEqual(expected);
    expect(await call('3782 822463 10005')).toEqual({ valid: true, brand: 'american-express', length: 15 });
  });

  it('reports a Luhn failure as invalid while still naming the brand', async () => {
    expect(await call('4111111111111112')).toEqual({ valid: false, brand: 'visa', length: 16 });
  });

  it('Luhn-checks UnionPay numbers too', async () => {
    expect(await call('6200000000000006')).toEqual({ valid: false, brand: 'unionpay', length: 16 });
  });

  it('reports a Luhn-valid number of a length the brand does not issue as invalid', async () => {
    // 17 digits, Luhn-valid, but Visa issues 13, 16 or 19 digits.
    expect(await call('41111111111111113')).toEqual({ valid: false, brand: 'visa', length: 17 });
  });

  it('reports an unrecognised prefix as brand unknown and invalid, even when Luhn passes', async () => {
    expect(await call('0000000000000000')).toEqual({ valid: false, brand: 'unknown', length: 16 });
  });

  it('rejects letters and other characters, naming the number field', () => {
    expect(rejectionMessage('4111a11111111111')).toMatch(/number/);
    expect(rejectionMessage('4111.1111.1111.1111')).toMatch(/number/);
    expect(rejectionMessage('４１１１１１１１１１１１１１１１')).toMatch(/number/);
  });

  it('rejects input with no digits, input over 64 characters, and non-strings', () => {
    expect(rejectionMessage('')).toMatch(/digit/);
    expect(rejectionMessage(' - ')).toMatch(/digit/);
    expect(rejectionMessage('4'.repeat(65))).toMatch(/64/);
    rejectionMessage(4111111111111111);
  });
});
