import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/agent.js';
import { PAY_TO_ENV } from '../support/pay-to.js';
import { spawnServe, type SpawnedServer } from '../support/spawn.js';

// Spawns the built CLI (`npm run build` first), as an operator runs it.

const dir = mkdtempSync(join(tmpdir(), 'tollbooth-start-failure-'));
const servers: SpawnedServer[] = [];
afterAll(async () => {
  for (const s of servers.splice(0)) await s.stop();
  rmSync(dir, { recursive: true, force: true });
});

const env = (extra: Record<string, string> = {}) => ({ DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'warn', ...extra });

/** Whether a text holds a JSON log line (what a person starting the server should not have to read). */
const hasJsonLine = (text: string) => text.split('\n').some((line) => line.trimStart().startsWith('{'));

describe('a start refused for its configuration', () => {
  it('lists every problem at once, one readable line naming each variable, and exits 78', async () => {
    const run = await runCli(
      ['serve'],
      env({ PORT: 'abc', FACILITATOR_URL: 'x402.org/facilitator', DATABASE_URL: 'mysql://db.example/x' }),
    );
    expect(run.code).toBe(78);
    expect(run.stderr).toMatch(/refused to start: 3 configuration problems/);
    expect(run.stderr).toMatch(/^ {2}- PORT: must be a port number/m);
    expect(run.stderr).toMatch(/^ {2}- FACILITATOR_URL: .*http:\/\/ or https:\/\//m);
    expect(run.stderr).toMatch(/^ {2}- DATABASE_URL: must be a postgres:\/\//m);
    expect(run.stderr).not.toContain('✖');
    expect(run.stderr).not.toContain('\\n');
    expect(hasJsonLine(run.stderr)).toBe(false);
  });

  it('says a FACILITATOR_URL without its scheme needs http:// or https://, not only "Invalid URL"', async () => {
    const run = await runCli(['serve'], env({ FACILITATOR_URL: 'localhost:4022' }));
    expect(run.code).toBe(78);
    expect(run.stderr).toMatch(/FACILITATOR_URL: must be a full URL starting with http:\/\/ or https:\/\//);
    expect(run.stderr).not.toMatch(/Invalid URL/);
  });

  it('takes a --port flag into the same listing', async () => {
    const run = await runCli(['serve', '--port', 'eighty'], env({ FACILITATOR_URL: 'facilitator.example' }));
    expect(run.code).toBe(78);
    expect(run.stderr).toMatch(/2 configuration problems/);
    expect(run.stderr).toMatch(/- PORT: /);
  });

  it('is listed the same way by tollbooth stdio, server and agent settings together', async () => {
    const run = await runCli(
      ['stdio'],
      env({ FACILITATOR_URL: 'x402.org/facilitator', BUDGET_MAX_USD_PER_DAY: 'lots' }),
    );
    expect(run.code).toBe(78);
    expect(run.stderr).toMatch(/tollbooth stdio refused to start: 2 configuration problems/);
    expect(run.stderr).toMatch(/- FACILITATOR_URL: /);
    expect(run.stderr).toMatch(/- BUDGET_MAX_USD_PER_DAY: /);
    expect(hasJsonLine(run.stderr)).toBe(false);
  });
});

describe('a configuration error of any other command', () => {
  it('is listed in readable lines naming each variable, exit 78', async () => {
    const run = await runCli(['receipts'], env({ PORT: 'x', FACILITATOR_URL: 'x402.org' }));
    expect(run.code).toBe(78);
    expect(run.stderr).toMatch(/^tollbooth receipts: invalid configuration:\n {2}- PORT: .*\n {2}- FACILITATOR_URL: /);
    expect(run.stderr).not.toContain('✖');
    expect(hasJsonLine(run.stderr)).toBe(false);
  });
});

describe('a start on a port already in use', () => {
  let holder: Server;
  let port: number;
  beforeAll(async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    port = (holder.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => holder.close(() => resolve())));

  it('names the port, PORT and --port in a readable line, and exits non-zero', async () => {
    const run = await runCli(['serve'], env({ PORT: String(port), HOST: '127.0.0.1' }));
    expect(run.code).not.toBe(0);
    const line = run.stderr.split('\n').find((l) => l.includes('EADDRINUSE'));
    expect(line).toMatch(new RegExp(`port ${port} is already in use`));
    expect(line).toMatch(/PORT=<n>/);
    expect(line).toMatch(/--port <n>/);
    expect(line!.trimStart().startsWith('{')).toBe(false);
  });

  it('says the same for a port given with --port', async () => {
    const run = await runCli(['serve', '--port', String(port), '--host', '127.0.0.1'], env());
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: port ${port} is already in use`));
  });
});

describe('tollbooth call without a deployment to call', () => {
  it('is a usage error: the reason and the usage text on stderr, exit 2, no JSON log line', async () => {
    const run = await runCli(['call', 'annuity', '--input', '{}'], env());
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^tollbooth call: name the deployment to call: --remote <base url> \(or set REMOTE_URL\)/,
    );
    expect(run.stderr).toMatch(/Usage: tollbooth call <tool \| url>/);
    expect(hasJsonLine(run.stderr)).toBe(false);
    expect(run.stdout).toBe('');
  });

  it('is not one when REMOTE_URL names it', async () => {
    // Nothing listens at the address: the call fails (exit 1), but past the command line.
    const run = await runCli(
      ['call', 'annuity', '--input', '{}', '--dry-run'],
      env({ REMOTE_URL: 'http://127.0.0.1:9' }),
    );
    expect(run.code).not.toBe(2);
  });
});

describe('the start line', () => {
  let facilitator: HttpServer;
  let facilitatorUrl: string;
  beforeAll(async () => {
    // A facilitator whose /supported lists only exact payments on Base: every other network is withheld at start-up.
    facilitator = createHttpServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url?.endsWith('/supported'))
        res.end(
          JSON.stringify({
            kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }],
            extensions: [],
            signers: {},
          }),
        );
      else res.writeHead(404).end('{}');
    });
    await new Promise<void>((resolve) => facilitator.listen(0, '127.0.0.1', resolve));
    facilitatorUrl = `http://127.0.0.1:${(facilitator.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => facilitator.close(() => resolve())));

  it('lists only the networks offered, not those the facilitator left out', async () => {
    const server = await spawnServe({ ...PAY_TO_ENV, FACILITATOR_URL: facilitatorUrl, LOG_LEVEL: 'info', MPP: 'off' });
    servers.push(server);
    const line = await server.logged('tollbooth listening');
    expect(line.networks).toEqual(['eip155:8453']);
  });
});
