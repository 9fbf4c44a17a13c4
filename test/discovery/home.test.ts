import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstSentence } from '../../src/discovery/home.js';
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

  it('is cached publicly only per Accept, since one URL answers JSON or HTML', async () => {
    const res = await fetch(server.url + '/');
    expect(res.headers.get('cache-control')).toMatch(/public/);
    expect(res.headers.get('vary')).toMatch(/\bAccept\b/i);
  });

  it('shows each description whole, or cut at a word boundary with an ellipsis', async () => {
    const doc = (await (await fetch(server.url + '/')).json()) as {
      tools: Array<{ name: string; description: string }>;
    };
    for (const { name, description } of doc.tools) {
      const full = [...tools, ...freeTools].find((t) => t.name === name)!.description;
      const shown = description.replace(/…$/, '');
      expect(description.length).toBeLessThanOrEqual(240);
      expect(full.startsWith(shown)).toBe(true);
      // What follows the shown part in the full description is not the rest of a word.
      expect(full.slice(shown.length)).toMatch(/^(\W|$)/);
    }
  });
});

describe('a description on the index', () => {
  it('is its first sentence', () => {
    expect(firstSentence('Computes an annuity. Then more text.')).toBe('Computes an annuity.');
  });

  it('is cut after the last whole word with an ellipsis when the sentence is too long', () => {
    const cut = firstSentence('alpha beta gamma delta epsilon', 20);
    expect(cut).toBe('alpha beta gamma…');
    expect(cut.length).toBeLessThanOrEqual(20);
  });
});
