import fc from 'fast-check';
import { formatUnits as viemFormatUnits } from 'viem';
import { describe, expect, it } from 'vitest';
import { formatUnits } from '../../src/tool/units.js';

describe('formatting atomic units', () => {
  it('writes what viem writes, for any amount and any number of decimals', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }),
        fc.integer({ min: 0, max: 30 }),
        (value, decimals) => {
          expect(formatUnits(value, decimals)).toBe(viemFormatUnits(value, decimals));
        },
      ),
      { numRuns: 2000 },
    );
    expect(formatUnits(1_500_000n, 6)).toBe('1.5');
    expect(formatUnits(0n, 18)).toBe('0');
  });
});
