import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { NOTHING_CHARGED } from '../../src/pipeline/charge-note.js';
import { defineTool, type AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** A free POST tool with a small body limit, beside the paid annuity. */
const freeEcho = defineTool({
  name: 'free-echo',
  title: 'Free echo',
  description: 'Test tool: a free tool that answers its note.',
  group: 'tools',
  method: 'POST',
  path: '/v1/test/free-echo',
  maxBodyBytes: 64,
  input: z.object({ note: z.string().optional().describe('Answered back.') }),
  output: z.object({ note: z.string() }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: (input) => ({ note: input.note ?? '' }),
});

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({}, { tools: [annuity, freeEcho] as AnyToolDefinition[] });
});
afterAll(() => server.close());

type ErrorAnswer = { code: string; message: string };

/** One request: its status and error answer. */
async function refused(method: string, path: string, body?: string, type = 'application/json') {
  const res = await fetch(server.url + path, { method, headers: { 'content-type': type }, body });
  return { status: res.status, error: ((await res.json()) as { error: ErrorAnswer }).error };
}

/** Every mention of a charge in a message. */
const chargeMentions = (message: string) => message.match(/charg/gi)?.length ?? 0;

describe('a refusal made before the pipeline', () => {
  it('ends with the charge fact, once, on a paid route', async () => {
    const answers = [
      await refused('POST', '/api/annuity', '{not json'),
      await refused('POST', '/api/annuity', '{}', 'text/plain'),
      await refused('POST', '/api/annuity?payment=1', '{}'),
      await refused('PUT', '/api/annuity', '{}'),
      await refused('POST', '/API/annuity/', '[]'),
    ];
    expect(answers.map((a) => a.status)).toEqual([400, 400, 400, 405, 400]);
    for (const { error } of answers) {
      expect(error.message.endsWith(` ${NOTHING_CHARGED}`), error.message).toBe(true);
      expect(chargeMentions(error.message)).toBe(1);
    }
  });

  it('never mentions a charge on a free route, nor on a route that is no tool', async () => {
    const answers = [
      await refused('POST', freeEcho.path, '{not json'),
      await refused('POST', freeEcho.path, '{}', 'text/plain'),
      await refused('POST', freeEcho.path, JSON.stringify({ note: 'x'.repeat(100) })),
      await refused('PUT', freeEcho.path, '{}'),
      await refused('POST', '/v1/no-such-tool', '{}'),
    ];
    expect(answers.map((a) => a.status)).toEqual([400, 400, 413, 405, 404]);
    for (const { error } of answers) expect(chargeMentions(error.message), error.message).toBe(0);
  });

  it('says the same words on both routes but for the charge fact', async () => {
    const paid = await refused('PUT', '/api/annuity', '{}');
    const free = await refused('PUT', freeEcho.path, '{}');
    expect(paid.error.message).toBe(`PUT is not allowed on /api/annuity: use POST. ${NOTHING_CHARGED}`);
    expect(free.error.message).toBe(`PUT is not allowed on ${freeEcho.path}: use POST.`);
  });
});
