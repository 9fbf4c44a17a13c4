import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { turnTakingJson } from '../limits/json-body.js';
import { ToolError } from '../shared/errors.js';
import { inputFields } from '../tool/tool.js';
import { sendError } from './encode.js';

const BODY_BYTES = Symbol('bodyBytes');
type WithBodyBytes = Request & { [BODY_BYTES]?: number };

/** Records how many body bytes arrived, so an empty POST counts as a bare probe rather than `{}`. */
function countBodyBytes(req: unknown, _res: unknown, buf: Buffer): void {
  (req as WithBodyBytes)[BODY_BYTES] = buf.length;
}

/** Whether a Content-Type names JSON: `application/json` (any parameters, e.g. a charset) or `application/<x>+json`. */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const media = (contentType.split(';', 1)[0] ?? '').trim().toLowerCase();
  return media === 'application/json' || /^application\/[a-z0-9!#$&^_.+-]+\+json$/.test(media);
}

/**
 * Reads any POST body as JSON, whatever its Content-Type says (the route then refuses a non-JSON type with a message
 * saying what to send, which needs the body's length to tell a bare probe from a body), and accepts any JSON value
 * so that `null` or `"hi"` is answered "must be a JSON object" rather than "not JSON".
 */
export function jsonBody(limit: number): RequestHandler {
  const json = turnTakingJson({ limit, strict: false, type: () => true, verify: countBodyBytes });
  return (req, res, next) => (declaresNoBody(req) ? noBody(req, next) : json(req, res, next));
}

/**
 * A request that says it has no body and nothing to decode it with (`Content-Length: 0` alone: the bare probes of
 * discovery crawlers): answered as express.json answers an empty body (`{}`, 0 bytes), without reading the stream.
 */
function declaresNoBody(req: Request): boolean {
  const { headers } = req;
  return (
    headers['content-length'] === '0' &&
    headers['transfer-encoding'] === undefined &&
    headers['content-encoding'] === undefined &&
    headers['content-type'] === undefined
  );
}

function noBody(req: Request, next: () => void): void {
  (req as WithBodyBytes)[BODY_BYTES] = 0;
  req.body = {};
  next();
}

const encodings = 'identity (no Content-Encoding), gzip, deflate or br';

/** What the body parser refused, as the one error body: 413 too large, 415 unreadable encoding or charset, 400 otherwise; never a 500. */
export const bodyErrors: ErrorRequestHandler = (err, req, res, next) => {
  const { type, status, expose, limit, encoding, charset } = err as {
    type?: string;
    status?: number;
    expose?: boolean;
    limit?: number;
    encoding?: string;
    charset?: string;
  };
  const refuse = (error: ToolError) => sendError(res, error);
  switch (type) {
    case 'entity.too.large':
      return refuse(
        new ToolError(
          'payload_too_large',
          `The request body is larger than this endpoint accepts (${limit} bytes); send a smaller body.`,
        ),
      );
    case 'encoding.unsupported':
      return refuse(
        new ToolError(
          'unsupported_media_type',
          `Content-Encoding ${encoding ?? req.header('content-encoding')} is not supported; send the JSON body as ${encodings}.`,
          { field: '(body)' },
        ),
      );
    case 'charset.unsupported':
      return refuse(
        new ToolError(
          'unsupported_media_type',
          `The charset ${charset ?? ''} is not supported; send the JSON body as UTF-8 (Content-Type: application/json).`,
          { field: '(body)' },
        ),
      );
    case 'entity.parse.failed':
      return refuse(isJsonContentType(req.header('content-type')) ? notJson() : wrongContentType(req));
  }
  if (!expose || typeof status !== 'number' || status < 400 || status >= 500) return next(err);
  // What raw-body and zlib refuse without a type: a body that does not decompress as its Content-Encoding says, or
  // one whose length does not match Content-Length.
  const coding = (req.header('content-encoding') ?? 'identity').trim().toLowerCase();
  const message =
    coding === 'identity'
      ? 'The request body could not be read (its length did not match Content-Length, or the upload was cut off); send it again.'
      : `The request body is not valid ${coding} data, as its Content-Encoding says; send it compressed correctly or uncompressed without Content-Encoding.`;
  return refuse(new ToolError('invalid_input', message, { field: '(body)' }));
};

function notJson(): ToolError {
  return new ToolError(
    'invalid_input',
    'The request body is not valid JSON; send a JSON object with Content-Type: application/json.',
    { field: '(body)' },
  );
}

function wrongContentType(req: Request): ToolError {
  const given = req.header('content-type');
  const got = given ? `Content-Type ${given.split(';', 1)[0]?.trim()}` : 'no Content-Type';
  return new ToolError(
    'invalid_input',
    `The request body must be JSON sent with Content-Type: application/json (it came with ${got}).`,
    { field: '(body)' },
  );
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** A POST route's input: none (a bare probe: no body, no query), the body's JSON object, or why the request is refused. */
export type BodyInput =
  { type: 'absent' } | { type: 'present'; fields: Record<string, unknown> } | { type: 'refused'; error: ToolError };

/**
 * Reads a POST route's input from the parsed body. A POST route reads nothing from the query string, so query
 * parameters are refused (they would otherwise be dropped while the call is charged on the body alone); a body needs
 * a JSON Content-Type and must be a JSON object.
 */
export function readBody(tool: { path: string; input: unknown }, req: Request): BodyInput {
  const fieldsTaken = () => inputFields(tool);
  // Without a `?` the query is empty: not parsed for the bare probes of the hot path.
  const query = req.url.includes('?') ? Object.keys(req.query) : [];
  if (query.length > 0) {
    const message = `Unknown query parameter${query.length > 1 ? 's' : ''}: ${query.join(', ')}. POST ${tool.path} reads its input only from the JSON body (fields: ${fieldsTaken().join(', ') || 'none'}); move the fields into the body.`;
    return { type: 'refused', error: new ToolError('invalid_input', message, { field: query[0] }) };
  }
  if (((req as WithBodyBytes)[BODY_BYTES] ?? 0) === 0) return { type: 'absent' };
  if (!isJsonContentType(req.header('content-type'))) return { type: 'refused', error: wrongContentType(req) };
  const body: unknown = req.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    const message = `The request body must be a JSON object of fields (${fieldsTaken().join(', ') || 'none'}), not ${kindOf(body)}.`;
    return { type: 'refused', error: new ToolError('invalid_input', message, { field: '(body)' }) };
  }
  return { type: 'present', fields: body as Record<string, unknown> };
}
