import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freeTools, paidTools as tools } from '../../tools/index.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let res: Response;
let text: string;
beforeAll(async () => {
  server = await startTestServer();
  res = await fetch(`${server.url}/llms.txt`);
  text = await res.text();
});
afterAll(() => server.close());

describe('GET /llms.txt', () => {
  it('is plain text in the llmstxt.org layout: a title, a one-line summary, then sections', () => {
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const lines = text.split('\n');
    expect(lines[0]).toBe('# Tollbooth');
    expect(lines[2]).toMatch(/^> .*x402/);
    expect(lines.filter((l) => l.startsWith('## '))).toEqual([
      '## How to pay',
      '## Endpoints',
      '## Paid tools',
      '## Free tools',
    ]);
  });

  it('says how to pay and where the MCP endpoint and the other discovery documents are', () => {
    expect(text).toMatch(/PAYMENT-SIGNATURE/);
    expect(text).toMatch(/_meta\["x402\/payment"\]/);
    expect(text).toContain('- MCP (streamable HTTP): http://localhost:4021/mcp');
    expect(text).toContain('http://localhost:4021/openapi.json');
    expect(text).toContain('http://localhost:4021/.well-known/x402');
  });

  it('gives every tool one line, in registry order, with a one-line description', () => {
    const entries = text.split('\n').filter((l) => l.startsWith('- ['));
    expect(entries.map((l) => /^- \[([^\]]+)\]/.exec(l)?.[1])).toEqual([...tools, ...freeTools].map((t) => t.name));
    for (const line of entries) expect(line.length).toBeLessThan(400);
    const annuity = entries.find((l) => l.startsWith('- [annuity]'));
    expect(annuity).toBe(
      '- [annuity](http://localhost:4021/api/annuity): POST /api/annuity — from $0.001 per call (x402 v2) — Annuity present and future value: ' +
        annuity!.split('Annuity present and future value: ')[1],
    );
  });
});
