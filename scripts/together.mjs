// Runs the npm scripts named on the command line side by side (`npm test`: build, typecheck, lint and the import check
// share nothing and are single-threaded, so on a machine with several cores they finish in the time of the longest).
// Each script's output is kept and printed whole when it ends, so logs never interleave; exits 1 when any failed.
import { spawn } from 'node:child_process';

const names = process.argv.slice(2);
if (names.length === 0) {
  process.stderr.write('usage: node scripts/together.mjs <npm script> [<npm script> ...]\n');
  process.exit(2);
}

/** Runs `npm run <name> --silent`; resolves with its exit code and everything it wrote. */
function run(name) {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', name, '--silent'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    child.once('error', (err) => resolve({ name, code: 1, output: `${err.message}\n` }));
    child.once('close', (code, signal) => {
      const output = Buffer.concat(chunks).toString('utf8');
      resolve({ name, code: code ?? (signal ? 1 : 0), output });
    });
  });
}

const results = await Promise.all(
  names.map((name) =>
    run(name).then((result) => {
      process.stdout.write(result.output);
      if (result.code !== 0) process.stderr.write(`npm run ${name} failed (exit ${result.code})\n`);
      return result;
    }),
  ),
);
process.exit(results.some((r) => r.code !== 0) ? 1 : 0);
