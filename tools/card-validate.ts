import { z } from 'zod';
import { detectBrand } from '../src/cards/brands.js';
import { defineTool } from '../src/tool/tool.js';

const CardValidateInputSchema = () =>
  z.object({
    number: z
      .string()
      .max(64, 'number must be at most 64 characters')
      .regex(/^[0-9 -]*$/, 'number may contain only digits, spaces and dashes')
      .refine((value) => /[0-9]/.test(value), 'number must contain at least one digit')
      .describe(
        'The card number (PAN) to check; digits, optionally grouped with spaces or dashes; at most 64 characters. ' +
          'Never stored or logged.',
      ),
  });

const CardValidateOutputSchema = () =>
  z.object({
    valid: z
      .boolean()
      .describe('True only if the Luhn checksum passes, the brand is recognised, and the digit count is valid for it.'),
    brand: z
      .string()
      .describe(
        'Detected brand from the number prefix: visa, mastercard, american-express, discover, diners-club, jcb, ' +
          'unionpay, maestro, mir, elo, hiper, hipercard, or unknown.',
      ),
    length: z.number().int().min(1).describe('Number of digits, after removing spaces and dashes.'),
  });

/** Luhn (mod 10) checksum over a string of ASCII digits. */
function luhnChecksumPasses(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** Payment card number check: Luhn checksum, brand detection and length. */
export const cardValidate = defineTool({
  name: 'card-validate',
  title: 'Payment card number validation',
  description:
    'Checks a payment card number offline (no network, no issuer lookup). Spaces and dashes are ignored. ' +
    'Returns `brand` detected from the number prefix (card-validator type, e.g. visa, mastercard, ' +
    'american-express, discover, diners-club, jcb, unionpay, maestro, mir, elo, hiper, hipercard; "unknown" ' +
    'when no single brand matches), `length` (digit count), and `valid`: true only if the Luhn checksum passes ' +
    'AND the brand is recognised AND the digit count is one of the lengths that brand issues (e.g. Visa 13, 16 ' +
    'or 19; American Express 15); UnionPay is Luhn-checked too. A true `valid` does not mean the card exists or ' +
    'is active. Input is at most 64 characters of digits, spaces and dashes; the number is never stored or ' +
    'logged. Deterministic.',
  group: 'tools',
  method: 'POST',
  path: '/api/card-validate',
  input: CardValidateInputSchema,
  output: CardValidateOutputSchema,
  pricing: { usd: '0.001', accepts: 'every-network' },
  example: { number: '4242 4242 4242 4242' },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: ({ number }) => {
    const digits = number.replace(/[ -]/g, '');
    const brand = detectBrand(digits);
    const valid = brand !== undefined && brand.lengths.includes(digits.length) && luhnChecksumPasses(digits);
    return { valid, brand: brand?.type ?? 'unknown', length: digits.length };
  },
});
