// A seller built with Coinbase's legacy `x402-express` (x402 version 1), exactly as its README shows, run by
// test/agent/third-party-x402-express.test.ts in a child process. Its packages come from test/third-party/node_modules
// only (npm ci --prefix test/third-party), never from the main tree.
//
// Env: PORT (127.0.0.1), PAY_TO, PRICE (e.g. "$0.001"), FACILITATOR_URL (an x402 version 1 facilitator).
// Sells `GET /quote` on `base-sepolia`; `GET /runs` (free) says how often the paid route ran.
import { createRequire } from 'node:module';

// Resolved from this folder, so test/third-party/node_modules is the first place looked in.
const require = createRequire(import.meta.url);
const express = require('express');
const { paymentMiddleware } = require('x402-express');

let runs = 0;
const app = express();
app.get('/runs', (_req, res) => res.json({ runs }));
app.use(
  paymentMiddleware(
    process.env.PAY_TO,
    {
      'GET /quote': {
        price: process.env.PRICE,
        network: 'base-sepolia',
        config: { description: 'A quote (legacy x402-express seller)', mimeType: 'application/json' },
      },
    },
    { url: process.env.FACILITATOR_URL },
  ),
);
app.get('/quote', (_req, res) => {
  runs++;
  res.json({ quote: 'legacy knowledge', n: runs });
});
app.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('listening\n'));
