import { z } from 'zod';
import { MAX_ANALYSED_LENGTH, RATINGS } from '../src/password/strength.js';
import { defineTool } from '../src/tool/tool.js';

/** Longest password accepted, in UTF-16 code units, to bound request size. */
const MAX_PASSWORD_LENGTH = 1024;

const PasswordStrengthInputSchema = () =>
  z.object({
    password: z
      .string()
      .min(1, 'password must not be empty')
      .max(MAX_PASSWORD_LENGTH, `password must be at most ${MAX_PASSWORD_LENGTH} characters`)
      .describe(
        `The password to assess; 1 to ${MAX_PASSWORD_LENGTH} characters, of which only the first ` +
          `${MAX_ANALYSED_LENGTH} are analysed. Never stored or logged.`,
      ),
  });

const PasswordStrengthOutputSchema = () =>
  z.object({
    entropyBits: z
      .number()
      .int()
      .min(0)
      .describe("Estimated guessing entropy in bits: round(log2(guesses)) from zxcvbn's guess estimate."),
    score: z.number().int().min(0).max(4).describe('zxcvbn score from 0 (too guessable) to 4 (very unguessable).'),
    rating: z.enum(RATINGS).describe('The score in words: very weak, weak, fair, strong, very strong (scores 0 to 4).'),
    crackTime: z
      .string()
      .describe(
        'Estimated time to crack offline against a slow hash at 10,000 guesses per second, e.g. "3 hours", "centuries".',
      ),
  });

/** Password strength estimate (zxcvbn score, entropy and offline crack time) for one password. */
export const passwordStrength = defineTool({
  name: 'password-strength',
  title: 'Password strength estimate',
  description:
    'Estimates how hard a password is to guess with zxcvbn-ts (common and English dictionaries, keyboard ' +
    'patterns, l33t substitutions, dates, sequences and repeats). Returns `score` 0-4, `rating` ("very weak", ' +
    '"weak", "fair", "strong", "very strong" for scores 0-4), `entropyBits` (round(log2 of the estimated guess ' +
    'count)) and `crackTime`, the English display string for an offline attack on a slow hash at 10,000 guesses ' +
    `per second. The password must be 1 to ${MAX_PASSWORD_LENGTH} characters; only the first ` +
    `${MAX_ANALYSED_LENGTH} characters are analysed, to bound cost. The password is never stored or logged. ` +
    'Deterministic, no external calls.',
  group: 'tools',
  method: 'POST',
  path: '/api/password-strength',
  input: PasswordStrengthInputSchema,
  output: PasswordStrengthOutputSchema,
  pricing: { usd: '0.001', accepts: 'every-network' },
  example: { password: 'correct horse battery staple' },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  // zxcvbn's cost grows with the input (up to ~1 s for a l33t-dense 256 characters): it runs on a worker thread.
  worker: { job: 'password-strength' },
  handler: ({ password }, ctx) => ctx.offload('password-strength', password.slice(0, MAX_ANALYSED_LENGTH)),
});
