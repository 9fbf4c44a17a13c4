/**
 * `npm run demo`: the whole server, offline, against the look-alike upstreams.
 *
 * Starts every look-alike upstream found in test/support/upstreams/ (each module's `start…Lookalike` export),
 * a local chain with the test USDC and a funded payer, then the built server (`dist/bin/cli.js serve`) pointed at
 * all of them, makes one paid call per market/open-data tool with a real signature, and prints the answers,
 * the URLs and example curl commands to stderr. `--once` stops after the example calls (CI, smoke tests);
 * otherwise it keeps running until Ctrl-C. It serves on PORT (default 4021); a port something else listens on is never
 * used (the demo would call and pay that server): a taken PORT stops it naming a free one, a taken 4021 is replaced.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { PaymentRequired } from '@x402/core/types';
import { paidTools as tools } from '../../tools/index.js';
import { LOCAL_NETWORK, startPaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import type { Lookalike } from '../support/upstreams/server.js';
import { PANEL_KEY } from '../support/upstreams/smm-panel.js';
import { demoPort } from './demo-port.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const UPSTREAMS_DIR = join(ROOT, 'test/support/upstreams');
const CLI = join(ROOT, 'dist/bin/cli.js');
const once = process.argv.includes('--once');
const say = (line = '') => process.stderr.write(line + '\n');

/** Which configuration variable points the server at each look-alike module (by file name). */
const URL_VARIABLE: Record<string, string> = {
  hyperliquid: 'HYPERLIQUID_API_URL',
  stablecoins: 'DEFILLAMA_STABLECOINS_URL',
  yields: 'DEFILLAMA_YIELDS_URL',
  worldbank: 'WORLDBANK_API_URL',
  kalshi: 'KALSHI_API_URL',
  goplus: 'GOPLUS_API_URL',
  dexscreener: 'DEXSCREENER_API_URL',
  'smm-panel': 'SMM_PANEL_URL',
};
/** The upstream look-alike each tool needs for its example call. */
const TOOL_UPSTREAM: Record<string, string> = {
  'perp-klines': 'hyperliquid',
  'crypto-indicators': 'hyperliquid',
  stablecoins: 'stablecoins',
  'dex-top-pools': 'yields',
  'development-indicator': 'worldbank',
  'venue-event': 'kalshi',
};

/** Inputs for the example calls of tools whose definition has no `example` (answers match the look-alike fixtures). */
const FALLBACK_INPUT: Record<string, Record<string, unknown>> = {
  stablecoins: { limit: 5 },
  'dex-top-pools': { chain: 'Ethereum', limit: 5 },
  'development-indicator': { country: 'BR', indicator: 'NY.GDP.MKTP.CD' },
  'venue-event': { eventTicker: 'KXFEDDECISION-25DEC' },
};

async function startLookalikes(): Promise<Map<string, Lookalike>> {
  const running = new Map<string, Lookalike>();
  for (const file of readdirSync(UPSTREAMS_DIR)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .sort()) {
    const name = file.slice(0, -3);
    if (!(name in URL_VARIABLE)) continue;
    const mod = (await import(pathToFileURL(join(UPSTREAMS_DIR, file)).href)) as Record<string, unknown>;
    const start = Object.entries(mod).find(
      ([key, value]) => /^start\w+Lookalike$/.test(key) && typeof value === 'function',
    );
    if (!start) continue;
    running.set(name, await (start[1] as () => Promise<Lookalike>)());
  }
  return running;
}

async function waitForHealth(url: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null)
      throw new Error(`the server exited with code ${child.exitCode}; is dist/ built (npm run build)?`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the server did not answer /healthz within 10 s');
}

async function main(): Promise<void> {
  // Before anything starts: a port another server holds would have the demo call (and pay) that server.
  const { port, note } = await demoPort(process.env);
  if (note) say(note);
  const lookalikes = await startLookalikes();
  say('Starting a local chain with test USDC (a few seconds)…');
  const paid = await startPaidEnvironment(1);
  const payer = paid.payers[0]!;
  const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-demo-'));
  const url = `http://127.0.0.1:${port}`;
  const upstreamEnv: Record<string, string> = Object.fromEntries(
    [...lookalikes].map(([name, l]) => [URL_VARIABLE[name]!, l.url]),
  );
  if (lookalikes.has('smm-panel')) upstreamEnv.SMM_PANEL_KEY = PANEL_KEY;
  const server = spawn(process.execPath, [CLI, 'serve'], {
    env: {
      PATH: process.env.PATH ?? '',
      ...paid.env,
      ...upstreamEnv,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const stop = async () => {
    server.kill('SIGTERM');
    for (const l of lookalikes.values()) await l.stop();
    await paid.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitForHealth(url, server);
    say(`\nTollbooth is serving on ${url} (MCP at ${url}/mcp), reading these look-alike upstreams:`);
    for (const [name, l] of lookalikes) say(`  ${URL_VARIABLE[name]}=${l.url}   (${name})`);
    say(`Payments settle on a local chain (${LOCAL_NETWORK}, ${paid.chain.rpcUrl}).\n`);

    for (const tool of tools.filter((t) => lookalikes.has(TOOL_UPSTREAM[t.name] ?? ''))) {
      const example = (tool.example ?? FALLBACK_INPUT[tool.name]) as Record<string, unknown> | undefined;
      if (!example) continue;
      const query =
        tool.method === 'GET'
          ? `?${new URLSearchParams(Object.entries(example).map(([k, v]): [string, string] => [k, String(v)]))}`
          : '';
      const target = `${url}${tool.path}${query}`;
      const init =
        tool.method === 'GET'
          ? {}
          : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(example) };
      const unpaid = await fetch(target, { ...init, method: tool.method });
      const header = unpaid.headers.get('payment-required');
      const challenge = header
        ? (JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as PaymentRequired)
        : undefined;
      const accepted = challenge?.accepts.find((a) => a.network === LOCAL_NETWORK);
      if (!accepted)
        throw new Error(
          `${url} did not offer a payment on the demo's local chain (${LOCAL_NETWORK}): another server answers there. Stop it, or run the demo on a free port (PORT=0 npm run demo).`,
        );
      const payment = encodePayment(await signExactPayment(payer, accepted));
      const res = await fetch(target, {
        ...init,
        method: tool.method,
        headers: { ...(init.headers ?? {}), 'payment-signature': payment },
      });
      const body = JSON.stringify(await res.json());
      say(
        `── ${tool.name}: ${tool.method} ${tool.path} ${tool.method === 'POST' ? JSON.stringify(example) : query} → HTTP ${res.status}`,
      );
      say(`   ${body.length > 600 ? body.slice(0, 600) + '…' : body}`);
    }

    if (lookalikes.has('smm-panel')) {
      const services = await fetch(`${url}/v1/smm-services?q=followers&limit=2`);
      say(`── smm-services (free): GET /v1/smm-services?q=followers&limit=2 → HTTP ${services.status}`);
      say(`   ${JSON.stringify(await services.json()).slice(0, 600)}`);
    }

    say('\nTry it yourself (an unpaid call answers 402 with the payment requirements in PAYMENT-REQUIRED):');
    say(
      `  curl -i -X POST ${url}/api/perp-klines -H 'content-type: application/json' -d '{"coin":"BTC","interval":"1h","limit":5}'`,
    );
    say(
      `  curl -s -X POST ${url}/api/crypto-indicators -H 'content-type: application/json' -d '{"coin":"ETH"}' -D - -o /dev/null | grep -i payment-required`,
    );
    say(`  curl -s ${url}/healthz`);
    say(
      'Paid calls need a signed PAYMENT-SIGNATURE header; see test/e2e/market-data.test.ts for a client that signs one.',
    );

    // A paid call with the agent side, as a newcomer would make it: the demo payer's key in a file, a budget, one command.
    const keyFile = join(dataDir, 'demo-payer.key');
    const privateKey = paid.chain.accounts.find((a) => a.address === payer.address)!.privateKey;
    writeFileSync(keyFile, privateKey + '\n', { mode: 0o600 });
    const agentEnv = {
      DATA_DIR: join(dataDir, 'agent'),
      NETWORKS_JSON: paid.env.NETWORKS_JSON!,
      WALLET_EVM_PRIVATE_KEY_FILE: keyFile,
      BUDGET_NETWORKS: LOCAL_NETWORK,
      BUDGET_MAX_USD_PER_CALL: '0.01',
      BUDGET_MAX_USD_PER_DAY: '1',
    };
    const input = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });
    const callArgs = ['call', 'annuity', '--input', input, '--remote', url];
    const quote = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;
    const command = `${Object.entries(agentEnv)
      .map(([k, v]) => `${k}=${quote(v)}`)
      .join(' ')} node ${CLI} ${callArgs.map((a) => (a.startsWith('{') ? quote(a) : a)).join(' ')}`;
    const result = execFileSync(process.execPath, [CLI, ...callArgs], {
      env: { PATH: process.env.PATH ?? '', ...agentEnv },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    say(
      `\n── a paid call with the agent side (tollbooth call, the demo payer's wallet, a $1 daily budget) → ${result.trim().replace(/\s+/g, ' ')}`,
    );
    say(
      '\nPay one yourself (it signs with the demo payer, settles on the local chain and prints the receipt on stderr):',
    );
    say(`  ${command}`);
    say(`See the receipts: DATA_DIR=${dataDir} node ${CLI} receipts`);
    say(`And what the agent spent: DATA_DIR=${agentEnv.DATA_DIR} node ${CLI} spending`);
    if (once) return;
    say('\nRunning; press Ctrl-C to stop.');
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
  } finally {
    await stop();
  }
}

main().catch((err: unknown) => {
  say(`demo failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
