import { afterAll, describe, expect, it } from 'vitest';
import { PAY_TO_ENV } from '../support/pay-to.js';
import { spawnServe, type SpawnedServer } from '../support/spawn.js';

// Spawns the built CLI (`npm run build` first): the bundle leaves iconv-lite's code-page tables out and fills
// mime-types' tables on their first read (scripts/bundle.mjs).

const servers: SpawnedServer[] = [];
afterAll(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

const post = (url: string, charset: string, body: Buffer) =>
  fetch(url, { method: 'POST', headers: { 'content-type': `application/json; charset=${charset}` }, body });

describe('the bundled server reading bodies in other charsets', () => {
  it('refuses a double-byte charset with 415 naming it, and still reads UTF-16 bodies', async () => {
    const server = await spawnServe({ ...PAY_TO_ENV });
    servers.push(server);
    const json = JSON.stringify({ payment: 100, ratePerPeriod: 0.01, periods: 12 });
    for (const charset of ['shift_jis', 'gbk', 'big5', 'euc-jp']) {
      const refused = await post(`${server.url}/api/annuity`, charset, Buffer.from(json));
      expect(refused.status).toBe(415);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(charset);
    }
    // Decoded from UTF-16 (no table needed): valid input, so the call reaches the payment (402).
    const utf16 = await post(`${server.url}/api/annuity`, 'utf-16le', Buffer.from(json, 'utf16le'));
    expect(utf16.status).toBe(402);
    expect(server.stderr()).not.toContain('is not bundled');
  });
});

describe('the bundled server naming content types', () => {
  it('answers a type given by its extension (its mime tables filled on first use) as express does', async () => {
    const server = await spawnServe({ ...PAY_TO_ENV });
    servers.push(server);
    // GET / negotiates `json` against `html` and then sets the type `html`: both looked up in the tables.
    const html = await fetch(`${server.url}/`, { headers: { accept: 'text/html' } });
    expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const json = await fetch(`${server.url}/`, { headers: { accept: 'application/json' } });
    expect(json.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(((await json.json()) as { tools?: unknown[] }).tools?.length).toBeGreaterThan(0);
    const llms = await fetch(`${server.url}/llms.txt`);
    expect(llms.headers.get('content-type')).toBe('text/plain; charset=utf-8');
  });
});
