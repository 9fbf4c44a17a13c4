import type { PaymentPayload } from '@x402/core/types';
import { BUILDER_CODE, BUILDER_CODE_PATTERN, MAX_SERVICE_CODES } from '@x402/extensions/builder-code';
import { z } from 'zod';
import type { Challenge } from './requirements.js';

const code = z.string().regex(BUILDER_CODE_PATTERN);

/** The accepted echo for each declared app code, built once (there is one per server). */
const echoSchemas = new Map<string, z.ZodType>();

function echoSchema(appCode: string): z.ZodType {
  let schema = echoSchemas.get(appCode);
  if (!schema) {
    schema = z
      .object({
        a: z.literal(appCode),
        s: z.union([code, z.array(code).max(MAX_SERVICE_CODES)]).optional(),
        w: code.optional(),
      })
      .strict();
    echoSchemas.set(appCode, schema);
  }
  return schema;
}

/**
 * Checks a `builder-code` echo beyond what the x402 core compares: only `a`, `s` and `w`, each a valid code,
 * at most 11 service codes, and `a` exactly as declared. Returns a reason sentence when the echo is refused.
 */
export function builderCodeProblem(challenge: Challenge, payload: PaymentPayload): string | undefined {
  if (challenge.x402Version !== 2) return undefined;
  const declared = challenge.extensions?.[BUILDER_CODE] as { info?: { a?: string } } | undefined;
  const echoed = payload.extensions?.[BUILDER_CODE] as { info?: unknown } | undefined;
  if (!declared || echoed === undefined) return undefined;
  const parsed = echoSchema(declared.info?.a ?? '').safeParse(echoed?.info);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0];
  return `builder-code ${issue?.path.join('.') || 'info'}: ${issue?.message ?? 'invalid'}`;
}
