/** One recorded answer, normalised, and the recording of a whole build. */
import type { AskedRequest, RawAnswer } from './http.js';
import { Placeholders, normaliseEtag, normaliseHeaderValue, normaliseText } from './normalise.js';

/** A normalised request and its normalised answer, under a stable id. */
export interface RecordedAnswer {
  id: string;
  request: { method: string; path: string; headers: Array<[string, string]>; body?: string };
  status: number;
  statusText: string;
  headers: Array<[string, string]>;
  body: string;
}

/** Every answer of one build, in the order they were asked. */
export interface Recording {
  cli: string;
  recordedAt: string;
  answers: RecordedAnswer[];
}

function normaliseHeaders(
  headers: Array<[string, string]>,
  bodyLength: number,
  p: Placeholders,
): Array<[string, string]> {
  return headers.map(([name, value]): [string, string] => {
    const lower = name.toLowerCase();
    if (lower === 'content-length' && Number(value) === bodyLength) return [name, '<length of the body>'];
    if (lower === 'etag') return [name, normaliseEtag(value)];
    if (lower === 'mcp-session-id') return [name, p.of('session', value)];
    return [name, normaliseHeaderValue(value, p)];
  });
}

/** Turns a request and its raw answer into a recorded answer (one placeholder numbering for both). */
export function recordAnswer(id: string, asked: AskedRequest, raw: RawAnswer): RecordedAnswer {
  const p = new Placeholders();
  const request = {
    method: asked.method,
    path: normaliseText(asked.path, p),
    headers: normaliseHeaders(asked.headers, -1, p),
    ...(asked.body === undefined ? {} : { body: normaliseText(asked.body, p) }),
  };
  const text = raw.body.toString('utf8');
  const body = Buffer.from(text, 'utf8').equals(raw.body)
    ? normaliseText(text, p)
    : `«binary base64:${raw.body.toString('base64')}»`;
  return {
    id,
    request,
    status: raw.status,
    statusText: raw.statusText,
    headers: normaliseHeaders(raw.headers, raw.body.length, p),
    body,
  };
}
