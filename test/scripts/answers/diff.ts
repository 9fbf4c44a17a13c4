/** Compares two recordings answer by answer and field by field. */
import type { RecordedAnswer, Recording } from './record.js';

/** One difference: which answer, which field, and the two values. */
export interface Difference {
  id: string;
  field: string;
  before: string;
  after: string;
}

const show = (value: unknown) => (value === undefined ? '(absent)' : JSON.stringify(value));

function headerFields(prefix: string, a: Array<[string, string]>, b: Array<[string, string]>): Difference[] {
  const out: Difference[] = [];
  const length = Math.max(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const [an, av] = a[i] ?? [];
    const [bn, bv] = b[i] ?? [];
    if (an !== bn) out.push({ id: '', field: `${prefix}[${i}] name`, before: show(an), after: show(bn) });
    if (av !== bv) out.push({ id: '', field: `${prefix}[${i}] ${bn ?? an}`, before: show(av), after: show(bv) });
  }
  return out;
}

/** The first place two texts part, with some context on both sides, so a long body's difference stays readable. */
function bodyDifference(a: string, b: string): { before: string; after: string } {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const from = Math.max(0, i - 80);
  const cut = (s: string) =>
    `${from > 0 ? '…' : ''}${s.slice(from, i + 160)}${i + 160 < s.length ? '…' : ''} (at byte ${i})`;
  return { before: cut(a), after: cut(b) };
}

function answerDifferences(a: RecordedAnswer, b: RecordedAnswer): Difference[] {
  const out: Difference[] = [];
  const scalar = (field: string, x: unknown, y: unknown) => {
    if (x !== y) out.push({ id: a.id, field, before: show(x), after: show(y) });
  };
  scalar('request.method', a.request.method, b.request.method);
  scalar('request.path', a.request.path, b.request.path);
  if (a.request.body !== b.request.body)
    out.push({ id: a.id, field: 'request.body', ...bodyDifference(a.request.body ?? '', b.request.body ?? '') });
  out.push(...headerFields('request.headers', a.request.headers, b.request.headers).map((d) => ({ ...d, id: a.id })));
  scalar('status', a.status, b.status);
  scalar('statusText', a.statusText, b.statusText);
  out.push(...headerFields('headers', a.headers, b.headers).map((d) => ({ ...d, id: a.id })));
  if (a.body !== b.body) out.push({ id: a.id, field: 'body', ...bodyDifference(a.body, b.body) });
  return out;
}

/** Every difference between two recordings: answers missing on either side, then each answer's fields in order. */
export function diffRecordings(before: Recording, after: Recording): Difference[] {
  const out: Difference[] = [];
  const afterById = new Map(after.answers.map((a) => [a.id, a]));
  const beforeIds = new Set(before.answers.map((a) => a.id));
  for (const a of before.answers) {
    const b = afterById.get(a.id);
    if (!b) out.push({ id: a.id, field: 'answer', before: `status ${a.status}`, after: '(not recorded)' });
    else out.push(...answerDifferences(a, b));
  }
  for (const b of after.answers)
    if (!beforeIds.has(b.id))
      out.push({ id: b.id, field: 'answer', before: '(not recorded)', after: `status ${b.status}` });
  const order = (r: Recording) => r.answers.map((a) => a.id).filter((id) => beforeIds.has(id) && afterById.has(id));
  if (order(before).join('\n') !== order(after).join('\n'))
    out.push({ id: '(recording)', field: 'order of answers', before: 'as recorded', after: 'reordered' });
  return out;
}
