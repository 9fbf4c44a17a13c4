import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { describeWithCaddy, startCaddy } from '../support/caddy.js';
import { behindProxySuite } from '../support/proxy-suite.js';

/** The Caddyfile operators copy, loaded as shipped (only its site address and upstream addresses replaced). */
const TEMPLATE = readFileSync(new URL('../../deploy/caddy/Caddyfile', import.meta.url), 'utf8');

describeWithCaddy('Tollbooth behind Caddy with deploy/caddy/Caddyfile', () => {
  behindProxySuite({
    name: 'caddy',
    start: (upstreams) => startCaddy(TEMPLATE, upstreams),
    more: (fleet) => {
      it('leaves the body limit to Tollbooth: 1 MiB on /mcp passes, one byte more gets its JSON 413 (not a 502); over 2 MiB Caddy refuses', async () => {
        const post = (base: string, bytes: number) =>
          fetch(`${base}/mcp`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
            body: `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'x'.repeat(bytes - 60)}"}}`.padEnd(bytes),
          });
        for (const bytes of [1024 * 1024, 1024 * 1024 + 1]) {
          const [mine, proxied] = await Promise.all([
            post(fleet.instances[0]!.url, bytes),
            post(fleet.proxy.url, bytes),
          ]);
          expect([bytes, proxied.status], fleet.proxy.errors()).toEqual([bytes, mine.status]);
          expect(await proxied.json()).toEqual(await mine.json());
        }
        expect((await post(fleet.proxy.url, 1024 * 1024 + 1)).status).toBe(413);
        // Caddy reads a body whole before proxying it, so it bounds it: one over 2 MiB gets Caddy's own refusal (an
        // empty 502 from Caddy 2.6) and never reaches an instance.
        expect([413, 502]).toContain((await post(fleet.proxy.url, 2 * 1024 * 1024 + 1)).status);
      });
    },
  });
});

/**
 * An instance look-alike in a process of its own that answers every POST as Tollbooth answers an MCP call: its headers
 * at once, its event 1 ms later.
 */
const STREAMING_UPSTREAM = `
const server = require('node:http').createServer((req, res) => {
  req.resume();
  req.once('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }).flushHeaders();
    setTimeout(() => res.end('event: message\\ndata: {"answered":true}\\n\\n'), 1);
  });
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

/** Starts STREAMING_UPSTREAM; resolves with its host:port once it listens. */
async function startStreamingUpstream(): Promise<{ host: string; close: () => Promise<void> }> {
  const child = spawn(process.execPath, ['-e', STREAMING_UPSTREAM], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  const exited = once(child, 'exit');
  return {
    host: `127.0.0.1:${line.toString().trim()}`,
    close: async () => {
      child.kill();
      await exited;
    },
  };
}

describeWithCaddy('deploy/caddy/Caddyfile in front of answers that stream', () => {
  it('passes on every streamed answer to a POST on kept-alive connections (caddy#5431 cut ~2% without buffer_requests)', async () => {
    const upstream = await startStreamingUpstream();
    const caddy = await startCaddy(TEMPLATE, [upstream.host]);
    try {
      // Two clients, each posting one request after another on fetch's kept-alive connections, to /mcp and to a tool
      // route (the Caddyfile's two handle blocks).
      const answered = await Promise.all(
        ['/mcp', '/api/annuity'].map(async (path) => {
          let count = 0;
          for (let i = 0; i < 400; i++) {
            const res = await fetch(caddy.url + path, { method: 'POST', body: '{"jsonrpc":"2.0","id":1}' });
            if ((await res.text()).includes('"answered":true')) count++;
          }
          return count;
        }),
      );
      expect(answered, caddy.errors()).toEqual([400, 400]);
    } finally {
      await caddy.stop();
      await upstream.close();
    }
  });
});
