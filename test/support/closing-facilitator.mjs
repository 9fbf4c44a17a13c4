// A facilitator look-alike in a process of its own (so it keeps closing connections while the test process is
// blocked), answering /verify, /settle and /supported with fixed valid answers. Prints its port on the first line.
// CLOSE_MODE says how it treats idle keep-alive connections:
//   fin       closes a connection after IDLE_MS idle (FIN), announcing no Keep-Alive
//   rst       resets a connection after IDLE_MS idle (RST), announcing no Keep-Alive
//   announce  announces `Keep-Alive: timeout=<IDLE_MS/1000>` and closes nothing itself; a request that arrives on a
//             connection idle longer than that is dropped unanswered (the close that raced the request)
// DROP_REUSED=N drops (after reading it) each of the first N requests that arrive on a reused connection.
// GET /counts answers { verify, settle, supported, dropped }: requests read, per endpoint, and requests dropped.
import { createServer } from 'node:http';

const mode = process.env.CLOSE_MODE ?? 'fin';
const idleMs = Number(process.env.IDLE_MS ?? 300);
let dropReused = Number(process.env.DROP_REUSED ?? 0);
const counts = { verify: 0, settle: 0, supported: 0, dropped: 0 };
const ANSWERS = {
  verify: { isValid: true, payer: '0x0000000000000000000000000000000000000001' },
  settle: { success: true, transaction: `0x${'ab'.repeat(32)}`, network: 'eip155:84532' },
  supported: { kinds: [], extensions: [], signers: {} },
};

const server = createServer((req, res) => {
  const socket = req.socket;
  clearTimeout(socket.idleTimer);
  const reused = (socket.served ?? 0) > 0;
  const idleFor = Date.now() - (socket.idleSince ?? Date.now());
  req.resume();
  req.on('end', () => {
    const op = (req.url ?? '/').slice(1);
    if (op === 'counts') return send(res, counts, false);
    if (mode === 'announce' && reused && idleFor > idleMs) {
      counts.dropped++;
      return socket.destroy();
    }
    if (!(op in ANSWERS)) return send(res, { error: 'not_found' }, false, 404);
    counts[op]++;
    if (reused && dropReused > 0) {
      dropReused--;
      counts.dropped++;
      return socket.destroy();
    }
    send(res, ANSWERS[op], true);
  });
});

function send(res, body, keep, status = 200) {
  const text = JSON.stringify(body);
  const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) };
  if (mode === 'announce') headers['keep-alive'] = `timeout=${Math.floor(idleMs / 1000)}`;
  res.writeHead(status, headers);
  res.end(text);
  const socket = res.socket;
  if (!socket || !keep) return;
  socket.served = (socket.served ?? 0) + 1;
  socket.idleSince = Date.now();
  if (mode === 'fin' || mode === 'rst')
    socket.idleTimer = setTimeout(() => (mode === 'rst' ? socket.resetAndDestroy() : socket.destroy()), idleMs);
}

// No keep-alive timer of Node's own (it would also announce one): the modes above decide.
server.keepAliveTimeout = 0;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
process.on('SIGTERM', () => process.exit(0));
