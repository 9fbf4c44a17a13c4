/** Runs the command line: src/cli.ts loads this once the compile cache is on. */
import { main } from './main.js';

// A reader that closes early (`tollbooth tools | head`) is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
});

main(process.argv.slice(2)).then(
  (code) => {
    if (code === undefined) return; // a server: it runs until it is stopped
    // A failure exits now (whatever may still hold the event loop); success lets stdout drain and exits by itself.
    if (code !== 0) process.exit(code);
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`tollbooth: ${String((err as Error)?.stack ?? err)}\n`);
    process.exit(1);
  },
);
