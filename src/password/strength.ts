/** zxcvbn-ts password strength, the CPU-bound part of password-strength (run as a worker job, src/workers/jobs.ts). */
import type { ZxcvbnFactory } from '@zxcvbn-ts/core';
import { lazyRequire } from '../shared/lazy.js';

/** Only this many leading UTF-16 code units are analysed, to bound CPU time per call. */
export const MAX_ANALYSED_LENGTH = 256;

/** The score in words, by score 0 to 4. */
export const RATINGS = ['very weak', 'weak', 'fair', 'strong', 'very strong'] as const;

const core = lazyRequire<typeof import('@zxcvbn-ts/core')>('@zxcvbn-ts/core');
const common = lazyRequire<typeof import('@zxcvbn-ts/language-common')>('@zxcvbn-ts/language-common');
const english = lazyRequire<typeof import('@zxcvbn-ts/language-en')>('@zxcvbn-ts/language-en');
let estimator: ZxcvbnFactory | undefined;

// Configured on the first call (the dictionaries take ~30 MB, so an idle server does not hold them): dictionaries,
// keyboard graphs and English display strings. l33tMaxSubstitutions 20 (library default 100) caps l33t variants per
// substring: scores for realistic passwords are unchanged, while the worst case for a 256-character input drops from
// seconds to under a second.
function zxcvbn(): ZxcvbnFactory {
  return (estimator ??= new (core().ZxcvbnFactory)({
    dictionary: { ...common().dictionary, ...english().dictionary },
    graphs: common().adjacencyGraphs,
    translations: english().translations,
    maxLength: MAX_ANALYSED_LENGTH,
    l33tMaxSubstitutions: 20,
  }));
}

/** What password-strength answers. */
export interface PasswordStrength {
  entropyBits: number;
  score: number;
  rating: (typeof RATINGS)[number];
  crackTime: string;
}

/** zxcvbn's estimate of the first {@link MAX_ANALYSED_LENGTH} characters: score, rating, entropy and crack time. */
export function estimatePasswordStrength(password: string): PasswordStrength {
  const result = zxcvbn().check(password.slice(0, MAX_ANALYSED_LENGTH));
  // guessesLog10 avoids overflow where guesses itself would be huge.
  const entropyBits = Math.max(0, Math.round(result.guessesLog10 * Math.log2(10)));
  return {
    entropyBits,
    score: result.score,
    rating: RATINGS[result.score]!,
    crackTime: result.crackTimes.offlineSlowHashingXPerSecond.display,
  };
}
