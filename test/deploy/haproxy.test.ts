import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { getFrom } from '../support/behind-proxy.js';
import { describeWithHaproxy, haproxyConfigFor, startHaproxy } from '../support/haproxy.js';
import { behindProxySuite } from '../support/proxy-suite.js';

/** The configuration operators copy, loaded as shipped (only its `bind` address and `server` lines replaced). */
const TEMPLATE = readFileSync(new URL('../../deploy/haproxy/haproxy.cfg', import.meta.url), 'utf8');

describeWithHaproxy('Tollbooth behind HAProxy with deploy/haproxy/haproxy.cfg', () => {
  behindProxySuite({
    name: 'haproxy',
    start: (upstreams) => startHaproxy(TEMPLATE, upstreams),
    more: (fleet) => {
      it('routes /mcp by client address and the tool routes in turn, with health checks on every server line', () => {
        const config = haproxyConfigFor(TEMPLATE, ['127.0.0.1:1', '127.0.0.1:2'], '127.0.0.1:3');
        expect(config.match(/^ {4}server tollbooth\d 127\.0\.0\.1:\d check$/gm)).toHaveLength(4);
        expect(config).toMatch(/backend tollbooth_mcp\n(?:.*\n)*? {4}balance source\n/);
        expect(fleet.proxy.config).toMatch(/^ {4}tune\.bufsize 65536$/m);
      });
      it('passes a 32 KiB payment header on to Tollbooth, which answers with its own 400 naming the limit', async () => {
        const res = await fetch(`${fleet.proxy.url}/api/annuity`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'payment-signature': 'A'.repeat(33 * 1024) },
          body: JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 }),
        });
        expect(res.status, fleet.proxy.errors()).toBe(400);
        expect(JSON.stringify(await res.json())).toMatch(/payment header is longer than 32768 characters/);
      });
      it("keeps an instance in service while its health checks get 429 (HAProxy's own address is over its limit)", async () => {
        // The limited instance allows two requests per address: HAProxy's checks (every 2 s, from 127.0.0.1) are
        // answered 429 from the third on, and three failed checks would take it out of service (503 for everyone).
        await sleep(9_000);
        expect(await getFrom('127.0.0.7', `${fleet.limitedProxy.url}/healthz`)).toBe(200);
        expect(fleet.limitedProxy.errors()).not.toMatch(/is DOWN/);
      });
    },
  });
});
