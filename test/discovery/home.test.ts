import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freeTools, paidTools as tools } from '../../tools/index.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe('GET /', () => {
  it('answers a small index: every tool with its route and price, and where to go next', async () => {
    const res = await fetch(server.url + '/');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as {
      tools: Array<{ name: string; method: string; url: string; price: string }>;
      links: Record<string, string>;
    };
    expect(doc.tools.map((t) => t.name)).toEqual([...tools, ...freeTools].map((t) => t.name));
    expect(doc.tools.find((t) => t.name === 'annuity')).toMatchObject({
      method: 'POST',
      url: expect.stringMatching(/\/api\/annuity$/),
      price: '$0.001 per call',
    });
    expect(doc.tools.find((t) => t.name === freeTools[0]!.name)?.price).toBe('free');
    expect(Object.keys(doc.links).sort()).toEqual(['health', 'llms', 'mcp', 'openapi', 'x402']);
  });

  it('answers a browser with the same as a page, escaped', async () => {
    const res = await fetch(server.url + '/', { headers: { accept: 'text/html' } });
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    const page = await res.text();
    expect(page).toContain('<code>annuity</code>');
    expect(page).toContain('/llms.txt');
  });
});
