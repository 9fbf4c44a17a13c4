/**
 * How the upstream client judges what came back: one HTTP answer becomes validated data, a retryable
 * {@link AttemptFailure} or a ToolError, and the last failure of a request becomes the ToolError the caller sees.
 */
import type { z } from 'zod';
import { ToolError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import { AttemptFailure, parseRetryAfter } from './attempt.js';
import type { UpstreamRequest, UpstreamSettings } from './upstream-types.js';

/** One HTTP answer as received: status, body text and the Retry-After header. */
export interface RawAnswer {
  status: number;
  text: string;
  retryAfter: string | null;
}

/** The body parsed as JSON, or `isJson: false` when it is not JSON. */
function parseBody(text: string): { json: unknown; isJson: boolean } {
  try {
    return { json: JSON.parse(text), isJson: true };
  } catch {
    return { json: undefined, isJson: false };
  }
}

/** The answer's data checked against the request's schema; upstream_invalid (logged) when it has another shape. */
function checkShape(json: unknown, schema: z.ZodType, settings: UpstreamSettings, log: Logger): unknown {
  const checked = schema.safeParse(json);
  if (checked.success) return checked.data;
  log.error('upstream response failed its schema', {
    upstream: settings.name,
    issues: checked.error.issues.slice(0, 5),
  });
  const first = checked.error.issues[0];
  const where = first ? ` (at ${first.path.join('.') || 'the top level'}: ${first.message})` : '';
  throw new ToolError(
    'upstream_invalid',
    `The ${settings.label} sent data in an unexpected shape${where}, so no answer is given. Try again later.`,
  );
}

/** Classifies one answer (429, disguised errors, 5xx, other non-2xx, non-JSON) and returns its validated data. */
export function readAnswer(
  { status, text, retryAfter }: RawAnswer,
  req: UpstreamRequest<z.ZodType>,
  settings: UpstreamSettings,
  log: Logger,
): unknown {
  const { label, name } = settings;
  const { json, isJson } = parseBody(text);
  if (status === 429)
    throw req.rateLimited?.(json) ?? new AttemptFailure('rate_limited', 'HTTP 429', parseRetryAfter(retryAfter));
  const disguised = req.interpret?.(status, json);
  if (disguised) throw disguised;
  if (status >= 500) throw new AttemptFailure('unavailable', `HTTP ${status}`);
  if (status < 200 || status >= 300) {
    log.error('upstream refused our request', { upstream: name, status, body: text.slice(0, 200) });
    throw new ToolError('upstream_unavailable', `The ${label} refused the request (HTTP ${status}). Try again later.`);
  }
  if (!isJson) {
    throw new ToolError(
      'upstream_invalid',
      `The ${label} sent a response that is not valid JSON, so no answer is given. Try again later.`,
    );
  }
  return checkShape(json, req.schema, settings, log);
}

/** Maps the last failure of a request to the ToolError the caller sees (ToolErrors pass through). */
export function finalUpstreamError(err: unknown, attempts: number, settings: UpstreamSettings): ToolError {
  const { label, timeoutMs } = settings;
  const tries = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
  if (err instanceof ToolError) return err;
  if (err instanceof AttemptFailure) {
    switch (err.kind) {
      case 'timeout':
        return new ToolError(
          'upstream_timeout',
          `The ${label} did not answer within ${timeoutMs} ms (${tries}). Try again in a minute.`,
        );
      case 'rate_limited': {
        const seconds = err.retryAfterMs === undefined ? undefined : Math.ceil(err.retryAfterMs / 1000);
        const when = seconds === undefined ? 'in a minute' : `in ${Math.max(1, seconds)} s`;
        return new ToolError(
          'upstream_rate_limited',
          `The ${label} is rate-limiting requests right now (${tries}). Try again ${when}.`,
          {
            ...(seconds === undefined ? {} : { details: { retryAfterSeconds: seconds } }),
          },
        );
      }
      case 'unavailable':
        return new ToolError(
          'upstream_unavailable',
          `The ${label} is unavailable (${err.message}; ${tries}). Try again in a minute.`,
        );
    }
  }
  return new ToolError('upstream_unavailable', `The ${label} could not be reached (${tries}). Try again in a minute.`, {
    cause: err,
  });
}
