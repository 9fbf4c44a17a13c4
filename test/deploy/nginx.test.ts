import { readFileSync } from 'node:fs';
import { describeWithNginx, startNginx } from '../support/nginx.js';
import { behindProxySuite } from '../support/proxy-suite.js';

/** The site file operators copy, loaded as shipped (only its upstream servers and listen address replaced). */
const TEMPLATE = readFileSync(new URL('../../deploy/nginx/tollbooth.conf', import.meta.url), 'utf8');

describeWithNginx('Tollbooth behind nginx with deploy/nginx/tollbooth.conf', () => {
  behindProxySuite({
    name: 'nginx',
    start: (upstreams) => startNginx(TEMPLATE, upstreams),
    // nginx's default proxy buffer (one memory page) refuses these 402s with 502 and says so in its error log.
    refusedHeaders: /too big header/,
  });
});
