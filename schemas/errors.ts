import { z } from 'zod';

/** The one error body both transports emit (HTTP JSON body, MCP error text). */
export const ErrorBodySchema = z.object({
  error: z.object({
    code: z.string().describe('Stable snake_case error code.'),
    message: z.string().describe('What went wrong and what to do about it.'),
    retryable: z.boolean().describe('Whether retrying the same call may succeed.'),
    field: z.string().optional().describe('Dotted path of the offending input field, if any.'),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;
