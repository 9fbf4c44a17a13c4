/**
 * `npm start`: runs the built CLI (dist/bin/cli.js) in this very process. The script is `exec node scripts/start.mjs
 * serve`, so npm's shell is replaced by this process and the SIGTERM/SIGINT npm forwards reaches the server, which
 * then shuts down gracefully (a shell in between would die and leave the server running on its own).
 * It never builds: `npm ci` builds through `prepare` and `npm run build` rebuilds. Without dist/ it says so and exits 1.
 */
import { existsSync } from 'node:fs';

const cli = new URL('../dist/bin/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write(
    'tollbooth: dist/bin/cli.js is missing: there is no built server to start (`npm start` never builds).\n' +
      '  In a clone, build it with `npm ci` (builds through `prepare`) or `npm run build`; both need the dev dependencies.\n' +
      '  After `npm ci --omit=dev`, build first elsewhere, or install the packed package instead (see docs/install.md).\n',
  );
  process.exit(1);
}
// The CLI reads its command from process.argv.slice(2): `serve` and whatever followed `npm start --`.
await import(cli.href);
