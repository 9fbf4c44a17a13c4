/**
 * `prepare` runs after `npm ci` / `npm install` in a clone: it builds dist/ when the development tools are installed
 * (TypeScript, esbuild), so `npm ci && npm start` starts the built server. Under `npm ci --omit=dev` they are not:
 * it says so and succeeds, and `npm start` runs whatever dist/ holds. `npm pack` and `npm publish` build in `prepack`,
 * so here they skip (npm runs both scripts for them). Installing the packed package runs neither.
 * TOLLBOOTH_PREPARE_BUILD=0 skips the build too: `.ci/run` sets it, since `npm test` builds right after.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const command = process.env.npm_command;
if (command === 'pack' || command === 'publish') process.exit(0);

if (process.env.TOLLBOOTH_PREPARE_BUILD === '0') {
  process.stderr.write('tollbooth: not building dist/ (TOLLBOOTH_PREPARE_BUILD=0): `npm run build` builds it.\n');
  process.exit(0);
}

const require = createRequire(import.meta.url);
const missing = ['typescript', 'esbuild'].filter((name) => {
  try {
    require.resolve(`${name}/package.json`);
    return false;
  } catch {
    return true;
  }
});
if (missing.length > 0) {
  process.stderr.write(
    `tollbooth: not building dist/: the development tools (${missing.join(', ')}) are not installed, e.g. after npm ci --omit=dev.\n` +
      '  `npm start` runs dist/ as it is: build it with a full `npm ci` or `npm run build` first, or install the packed package (docs/install.md).\n',
  );
  process.exit(0);
}

// `npm run build` through the npm that runs this script (npm_execpath), else the one on PATH.
const npm = process.env.npm_execpath;
const result = npm
  ? spawnSync(process.execPath, [npm, 'run', 'build', '--silent'], { stdio: 'inherit' })
  : spawnSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit', shell: process.platform === 'win32' });
if (result.error) throw result.error;
process.exit(result.status ?? 1);
