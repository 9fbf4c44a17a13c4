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
      it('leaves the body limit to Tollbooth: 1 MiB on /mcp passes, one byte more gets its JSON 413 (not a 502)', async () => {
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
      });
    },
  });
});
