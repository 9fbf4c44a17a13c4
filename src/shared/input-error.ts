import type { z } from 'zod';
import { ToolError } from './errors.js';

/** Turns a zod failure into an invalid_input error that names the first offending field (unknown fields first). */
export function inputError(error: z.ZodError): ToolError {
  const issues = error.issues.map((i) => ({ field: i.path.join('.') || '(body)', message: i.message }));
  const unknown = error.issues.find((i) => i.code === 'unrecognized_keys');
  if (unknown) {
    const field = [...unknown.path, unknown.keys[0] ?? ''].join('.');
    return new ToolError('invalid_input', unknown.message, { field, details: { issues } });
  }
  const first = issues[0] ?? { field: '(body)', message: 'invalid input' };
  return new ToolError(
    'invalid_input',
    `Invalid input: ${first.field}: ${first.message}. Fix the field and call again.`,
    {
      field: first.field,
      details: { issues },
    },
  );
}
