/**
 * `node --import tsx test/scripts/header-bytes.ts` measures the response headers of the unpaid `402` of every paid
 * route, as sent, with the default configuration (mainnet set, MPP on, no facilitator): the `PAYMENT-REQUIRED` and
 * `WWW-Authenticate` values and all headers (`name: value` plus CRLF each), largest first, as the Markdown table of
 * docs/deploy.md ("Header sizes of Tollbooth's answers"). Extra `NAME=value` arguments are added to the environment.
 */
import { request } from 'node:http';
import { paidTools } from '../../tools/index.js';
import { startTestServer } from '../support/server.js';

/** One route's header bytes. */
export interface HeaderBytes {
  route: string;
  paymentRequired: number;
  wwwAuthenticate: number;
  all: number;
}

/** The raw headers of an answer to a bare request (no body, no payment), as the server sent them. */
function rawHeaders(url: string, method: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.rawHeaders));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The header bytes of every paid route's unpaid 402, largest first, on a server started with `env`. */
export async function measureHeaderBytes(env: Record<string, string> = {}): Promise<HeaderBytes[]> {
  const server = await startTestServer(env);
  try {
    const rows: HeaderBytes[] = [];
    for (const tool of paidTools) {
      const raw = await rawHeaders(server.url + tool.path, tool.method);
      const row = { route: `${tool.method} ${tool.path}`, paymentRequired: 0, wwwAuthenticate: 0, all: 0 };
      for (let i = 0; i < raw.length; i += 2) {
        const [name, value] = [raw[i]!, raw[i + 1]!];
        const bytes = Buffer.byteLength(value);
        row.all += Buffer.byteLength(name) + 2 + bytes + 2;
        if (name.toLowerCase() === 'payment-required') row.paymentRequired += bytes;
        if (name.toLowerCase() === 'www-authenticate') row.wwwAuthenticate += bytes;
      }
      rows.push(row);
    }
    return rows.sort((a, b) => b.all - a.all);
  } finally {
    await server.close();
  }
}

const bytes = (n: number) => (n === 0 ? '—' : `${n.toLocaleString('en-US')} B`);

/** The rows as docs/deploy.md's table. */
export function headerTable(rows: readonly HeaderBytes[]): string {
  const lines = ['| Route | `PAYMENT-REQUIRED` | `WWW-Authenticate` | all headers |', '|---|---|---|---|'];
  for (const r of rows)
    lines.push(`| \`${r.route}\` | ${bytes(r.paymentRequired)} | ${bytes(r.wwwAuthenticate)} | ${bytes(r.all)} |`);
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const env = Object.fromEntries(
    process.argv.slice(2).map((arg) => [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]),
  );
  const rows = await measureHeaderBytes({ LOG_LEVEL: 'silent', ...env });
  process.stdout.write(headerTable(rows) + '\n');
}
