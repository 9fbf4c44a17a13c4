/**
 * Requests `<url>/healthz` every 10 ms (each on its own, never waiting for the last) in a process of its own, so the
 * latencies are not those of the flooding process's busy event loop; on a line on stdin it stops, waits for the
 * missing answers (a minute at most: later ones count as failed) and prints `{ times, failed, lags }` as JSON;
 * `lags` are how late this process's own 10 ms timer fired (ms), so a slow answer can be told from a starved poller.
 */
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

const url = process.argv[2];
const agent = new Agent({ keepAlive: true });
const times = [];
const lags = [];
let expected = performance.now() + 10;
const running = new Set();
let failed = 0;
const timer = setInterval(() => {
  const start = performance.now();
  lags.push(Math.max(0, start - expected));
  expected = start + 10;
  const done = new Promise((resolve) => {
    const req = request(`${url}/healthz`, { agent }, (res) => {
      res.resume();
      res.on('end', () => {
        if (res.statusCode === 200) times.push(performance.now() - start);
        else failed++;
        resolve();
      });
    });
    req.setTimeout(60_000, () => req.destroy(new Error('no answer within 60 s')));
    req.on('error', () => {
      failed++;
      resolve();
    });
    req.end();
  });
  running.add(done);
  void done.then(() => running.delete(done));
}, 10);
process.stdin.once('data', async () => {
  clearInterval(timer);
  await Promise.all(running);
  agent.destroy();
  process.stdout.write(JSON.stringify({ times, failed, lags }) + '\n');
  process.exit(0);
});
