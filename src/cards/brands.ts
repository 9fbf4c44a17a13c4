/**
 * Card brand detection for card-validate: card-validator's brand table (its credit-card-type data), corrected where it
 * disagrees with the brands' published IIN ranges.
 */
import { lazyRequire } from '../shared/lazy.js';

/** `card-validator`, loaded on the first call. */
const cardValidator = lazyRequire<typeof import('card-validator')>('card-validator');

/** An IIN pattern as credit-card-type writes it: a prefix, or an inclusive range of prefixes of one length. */
type Pattern = number | [number, number];

/** One brand: its prefixes, the prefixes it does not hold after all, and the digit counts it issues. */
export interface CardBrand {
  readonly type: string;
  readonly patterns: readonly Pattern[];
  readonly excluded: readonly string[];
  readonly lengths: readonly number[];
}

/**
 * Where the library's data is wrong (each against the published IIN table of ISO/IEC 7812 issuers):
 * - Visa issues 13, 16 and 19 digits, not 18.
 * - Diners Club International also holds 3095.
 * - Maestro's catch-all "any leading 6" claims RuPay (60), UnionPay gaps (627x–629x) and other schemes, and its 50x
 *   ranges claim Dankort (5019), Aura (507860) and RuPay (508); those numbers are no brand this tool supports.
 */
const CORRECTIONS: Record<string, Partial<Omit<CardBrand, 'type'>> & { dropPatterns?: readonly Pattern[] }> = {
  visa: { lengths: [13, 16, 19] },
  'diners-club': { patterns: [[300, 305], 3095, 36, 38, 39] },
  maestro: { dropPatterns: [6], excluded: ['5019', '507860', '508'] },
};

let table: readonly CardBrand[] | undefined;

/** The brand table: the library's brands in its order of precedence, with the corrections applied. */
export function cardBrands(): readonly CardBrand[] {
  if (table) return table;
  const { creditCardType } = cardValidator();
  table = Object.values(creditCardType.types).map((type) => {
    const info = creditCardType.getTypeInfo(type);
    const fix = CORRECTIONS[type] ?? {};
    const drop = fix.dropPatterns ?? [];
    const patterns = (fix.patterns ?? (info.patterns as Pattern[])).filter((p) => !drop.includes(p));
    return { type, patterns, excluded: fix.excluded ?? [], lengths: fix.lengths ?? info.lengths };
  });
  return table;
}

/** How many leading digits `pattern` fixes if `digits` starts within it, else 0. */
function matchStrength(digits: string, pattern: Pattern): number {
  if (!Array.isArray(pattern)) return digits.startsWith(String(pattern)) ? String(pattern).length : 0;
  const width = String(pattern[0]).length;
  if (digits.length < width) return 0;
  const prefix = Number(digits.slice(0, width));
  return prefix >= pattern[0] && prefix <= pattern[1] ? width : 0;
}

/** The brand whose most specific matching prefix is longest (the first in precedence on a tie), or undefined. */
export function detectBrand(digits: string): CardBrand | undefined {
  let best: CardBrand | undefined;
  let bestStrength = 0;
  for (const brand of cardBrands()) {
    if (brand.excluded.some((prefix) => digits.startsWith(prefix))) continue;
    const strength = brand.patterns.find((p) => matchStrength(digits, p) > 0);
    const value = strength === undefined ? 0 : matchStrength(digits, strength);
    if (value > bestStrength) {
      best = brand;
      bestStrength = value;
    }
  }
  return best;
}
