import { parse as parseQuery } from 'node:querystring';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isJsonContentType } from '../../src/http/body.js';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { freeTools, paidTools as tools } from '../../tools/index.js';
import { countingTools } from '../support/paid.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { PANEL_KEY, startSmmPanelLookalike, type SmmPanelLookalike } from '../support/upstreams/smm-panel.js';
import {
  fuzzOptions,
  hostileBody,
  hostileKey,
  hostileQuery,
  hostileValue,
  inputSchemaOf,
  type RawBody,
  wellFormed,
} from './arbitraries.js';
import {
  accepts,
  expectChallenge,
  expectInvalidInput,
  expectNoServerError,
  expectUnpolluted,
  jsonOf,
  LIMITS_OFF,
  OTHER_PATHS,
  totalRuns,
} from './support.js';

const DEFAULT_LIMIT = 64 * 1024;
let server: TestServer;
let panel: SmmPanelLookalike;
let runs: Map<string, number>;

beforeAll(async () => {
  panel = await startSmmPanelLookalike();
  const counted = countingTools(tools);
  runs = counted.runs;
  server = await startTestServer(
    { ...LIMITS_OFF, SMM_PANEL_URL: `${panel.url}/api/v2`, SMM_PANEL_KEY: PANEL_KEY },
    { tools: counted.tools },
  );
});
afterAll(async () => {
  await server?.close();
  await panel?.stop();
});

const byName = new Map<string, AnyToolDefinition>(tools.map((t) => [t.name, t]));
/** Tools are drawn by name, so a counterexample prints the name rather than the whole definition. */
const toolNamed = (name: string) => byName.get(name)!;
const postTools = tools.filter((t) => t.method === 'POST').map((t) => t.name);
const getTools = tools.filter((t) => t.method === 'GET').map((t) => t.name);

/** What the server must make of a body, decided with the tool's own zod schema on the bytes as the server decodes them. */
function verdict(tool: AnyToolDefinition, body: RawBody): 'probe' | 'unsupported' | 'too large' | 'invalid' | 'valid' {
  if (body.bytes.length === 0) return 'probe';
  const charset = /charset=([^;]+)/i.exec(body.contentType)?.[1]?.trim().toLowerCase();
  // The JSON parser decodes only UTF charsets (any other: 415 before the body is read); the body must be sent as JSON.
  if (charset && !charset.startsWith('utf-')) return 'unsupported';
  if (body.bytes.length > (tool.maxBodyBytes ?? DEFAULT_LIMIT)) return 'too large';
  if (charset && charset !== 'utf-8') return 'invalid';
  if (!isJsonContentType(body.contentType)) return 'invalid';
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.bytes.toString('utf8').replace(/^\uFEFF/, ''));
  } catch {
    return 'invalid';
  }
  if (typeof parsed !== 'object' || parsed === null) return 'invalid';
  return accepts(tool, parsed) ? 'valid' : 'invalid';
}

function post(path: string, body: RawBody): Promise<Response> {
  return fetch(server.url + path, {
    method: 'POST',
    headers: body.contentType ? { 'content-type': body.contentType } : {},
    body: body.bytes,
  });
}

describe('fuzzing the paid routes over HTTP (never a 5xx, never a handler run without payment)', () => {
  it('answers any body on a paid POST route with 400 naming a field, 413, 415, or the 402 challenge only for a JSON body its schema accepts', async () => {
    const cases = fc
      .constantFrom(...postTools)
      .chain((name) =>
        hostileBody(inputSchemaOf(toolNamed(name).input), toolNamed(name).maxBodyBytes ?? DEFAULT_LIMIT).map(
          (body) => ({ name, body }),
        ),
      );
    await fc.assert(
      fc.asyncProperty(cases, async ({ name, body }) => {
        const tool = toolNamed(name);
        const res = await post(tool.path, body);
        const what = `POST ${tool.path} with ${body.kind} (${body.bytes.length} bytes, ${body.contentType || 'no content type'})`;
        expectNoServerError(res.status, tool.path, what);
        const answer = await jsonOf(res);
        switch (verdict(tool, body)) {
          case 'probe':
            expect(res.status, what).toBe(402);
            expectChallenge(answer, what);
            break;
          case 'unsupported':
            expect(res.status, what).toBe(415);
            expect((answer?.error as { code?: string } | undefined)?.code, what).toBe('unsupported_media_type');
            break;
          case 'too large':
            expect(res.status, what).toBe(413);
            break;
          case 'invalid':
            expect(res.status, what).toBe(400);
            expectInvalidInput(answer, what);
            break;
          case 'valid':
            // A precheck may refuse a well-formed input on its own terms (e.g. an unknown service), never with a 402.
            if (tool.precheck && res.status !== 402) expect(res.status, what).toBeGreaterThanOrEqual(400);
            else {
              expect(res.status, what).toBe(402);
              expectChallenge(answer, what);
            }
        }
        expect(totalRuns(runs), what).toBe(0);
        expectUnpolluted();
      }),
      fuzzOptions(250),
    );
  });

  it('answers any query string on a paid GET route (and HEAD) with 400 naming a field or the 402 challenge only for a query its schema accepts', async () => {
    const cases = fc
      .constantFrom(...getTools)
      .chain((name) => hostileQuery(inputSchemaOf(toolNamed(name).input)).map((query) => ({ name, query })));
    await fc.assert(
      fc.asyncProperty(cases, async ({ name, query }) => {
        const tool = toolNamed(name);
        const url = new URL(`${server.url}${tool.path}?${query}`);
        const res = await fetch(url);
        const what = `GET ${tool.path}?${query.slice(0, 200)}`;
        expectNoServerError(res.status, tool.path, what);
        const answer = await jsonOf(res);
        if (res.status === 431 || res.status === 414) return; // the URL is longer than Node accepts: refused before any route
        const input = parseQuery(url.search.slice(1));
        if (Object.keys(input).length === 0 || accepts(tool, input)) {
          expect(res.status, what).toBe(402);
          expectChallenge(answer, what);
        } else {
          expect(res.status, what).toBe(400);
          expectInvalidInput(answer, what);
        }
        const head = await fetch(url, { method: 'HEAD' });
        expect(head.status, `HEAD ${what}`).toBe(res.status);
        expect(totalRuns(runs), what).toBe(0);
        expectUnpolluted();
      }),
      fuzzOptions(150),
    );
  });
});

describe('fuzzing every route and method', () => {
  const freePaths = freeTools.map((t) => t.path);
  const paths = [...tools.map((t) => t.path), ...freePaths, ...OTHER_PATHS];
  const path = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...paths) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom(...freePaths.filter((p) => p.includes(':'))), fc.string({ maxLength: 40 }))
        .map(([p, id]) => p.replace(/:[A-Za-z]+/, encodeURIComponent(wellFormed(id)))),
    },
    { weight: 1, arbitrary: fc.webPath() },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '/api/../api/annuity',
        '/API/ANNUITY',
        '/api/annuity/',
        '/api/annuity%00',
        '/%2e%2e/etc/passwd',
        '//api//annuity',
        '/api/annuity?x=1#frag',
        '/mcp/extra',
      ),
    },
  );
  const request = fc.record({
    path,
    method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'),
    query: fc.option(hostileQuery({ type: 'object', properties: { q: { type: 'string' } } }), { nil: undefined }),
    body: fc.option(hostileBody({ type: 'object', additionalProperties: {} }, DEFAULT_LIMIT), { nil: undefined }),
    headers: fc.dictionary(
      fc.constantFrom(
        'accept',
        'mcp-session-id',
        'mcp-protocol-version',
        'origin',
        'x-forwarded-for',
        'if-none-match',
        'range',
      ),
      fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 }),
    ),
  });

  it('never answers a request to any path, with any method, query, body and headers, with a server error or a handler run', async () => {
    await fc.assert(
      fc.asyncProperty(request, async ({ path: p, method, query, body, headers }) => {
        const hasBody = body !== undefined && method !== 'GET' && method !== 'HEAD';
        const target = `${server.url}${p}${query ? (p.includes('?') ? '&' : '?') + query : ''}`;
        const what = `${method} ${target.slice(server.url.length, 300)}${hasBody ? ` with ${body.kind}` : ''} ${JSON.stringify(headers)}`;
        let res: Response;
        try {
          res = await fetch(target, {
            method,
            headers: { ...headers, ...(hasBody && body.contentType ? { 'content-type': body.contentType } : {}) },
            ...(hasBody ? { body: body.bytes } : {}),
          });
        } catch (err) {
          // fetch itself refuses some combinations (e.g. a header value it will not send); nothing reached the server.
          if (err instanceof TypeError && !/fetch failed/.test(err.message)) return;
          throw new Error(`${what}: ${String((err as Error).cause ?? err)}`, { cause: err });
        }
        await res.arrayBuffer();
        expectNoServerError(res.status, p, what);
        expect(totalRuns(runs), what).toBe(0);
        expectUnpolluted();
      }),
      fuzzOptions(250),
    );
  });

  it('answers hostile input to the free endpoints with a 4xx or their result, never a server error', async () => {
    const freeNamed = new Map<string, AnyToolDefinition>(freeTools.map((t) => [t.name, t]));
    const cases = fc.constantFrom(...freeNamed.keys()).chain((name) =>
      fc.record({
        name: fc.constant(name),
        query: hostileQuery(inputSchemaOf(freeNamed.get(name)!.input)),
        body: hostileBody(inputSchemaOf(freeNamed.get(name)!.input), DEFAULT_LIMIT),
        id: fc.oneof(
          fc.string({ maxLength: 30 }),
          fc.nat().map(String),
          hostileValue.map((v) => JSON.stringify(v) ?? ''),
          hostileKey,
        ),
      }),
    );
    await fc.assert(
      fc.asyncProperty(cases, async ({ name, query, body, id }) => {
        const tool = freeNamed.get(name)!;
        const p = tool.path.replace(/:[A-Za-z]+/, encodeURIComponent(wellFormed(id.slice(0, 200))));
        const res = tool.method === 'GET' ? await fetch(`${server.url}${p}?${query}`) : await post(p, body);
        const what = `${tool.method} ${p} ${tool.method === 'GET' ? query.slice(0, 200) : body.kind}`;
        expectNoServerError(res.status, p, what);
        const answer = await jsonOf(res);
        if (res.status === 400)
          expect((answer?.error as { code?: string } | undefined)?.code, what).toBeTypeOf('string');
        expectUnpolluted();
      }),
      fuzzOptions(120),
    );
  });
});
