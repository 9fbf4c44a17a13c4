#!/usr/bin/env node
import { fileURLToPath } from 'node:url';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { runCall } from './client/cli-call.js';
import { remoteOverrides, runRemoteStdio } from './client/stdio.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger, type Logger } from './log.js';
import { priceSummary } from './payments/pricing.js';
import { installProcessPolicy, UNCAUGHT_EXCEPTION } from './process-policy.js';
import { runReceipts } from './receipts.js';
import { createRuntime, listen, newMcpServer } from './runtime.js';
import { tools } from '../tools/index.js';
import { VERSION } from './version.js';

const USAGE = `tollbooth ${VERSION}: pay-per-call tools for AI agents (x402 over HTTP and MCP)

Usage:
  tollbooth serve     HTTP routes + MCP streamable HTTP at /mcp (default; PORT, default 4021)
  tollbooth stdio     MCP over stdio (for agents that spawn the server)
  tollbooth stdio --remote <base url> [--remote-tools|--remote-token|--remote-smm|--remote-transfers <url>]
                      remote mode: the same tools, executed on a remote deployment and paid from the
                      user's wallet under the user's budget (WALLET_*, BUDGET_*; REMOTE_URL works too)
  tollbooth call <tool> --input '<json>' [--remote <url>] [--max-usd 0.05] [--dry-run] [--yes]
                      one paid call of a remote tool for scripts: JSON result on stdout, receipt on stderr
  tollbooth tools     list the tools with method, path and price
  tollbooth mcp-config   print ready MCP client entries (stdio, streamable HTTP, remote paying stdio) for this install
  tollbooth receipts [--limit N] [--status settled|pending|failed] [--json]
                      settled, pending and failed payments with totals by tool and network (DATABASE_URL or DATA_DIR)
  tollbooth help      this text

Configuration comes from the environment; see README.md.`;

function warnDevelopment(config: Config, log: Logger): void {
  if (config.devPayTo.length > 0) {
    log.warn(
      'DEVELOPMENT PAY-TO ADDRESSES IN USE: payments would go to placeholder addresses nobody controls. Set PAY_TO_EVM, PAY_TO_SOLANA, PAY_TO_STELLAR and PAY_TO_ALGORAND before taking real payments.',
      { families: config.devPayTo },
    );
  }
}

/**
 * Runs `stop` once on the first SIGTERM/SIGINT (or other trigger); a second signal while it runs exits at once with 1.
 * A stop after an uncaught exception exits with 1 even when it was clean.
 */
function onStop(log: Logger, stop: (why: string) => Promise<boolean>): (why: string) => void {
  let stopping = false;
  return (why) => {
    if (stopping) {
      if (why === 'SIGTERM' || why === 'SIGINT') {
        log.warn('second signal during shutdown: exiting now', { signal: why });
        process.exit(1);
      }
      return;
    }
    stopping = true;
    stop(why).then(
      (clean) => process.exit(clean && why !== UNCAUGHT_EXCEPTION ? 0 : 1),
      (err: unknown) => {
        log.error('shutdown failed', { error: String((err as Error)?.stack ?? err) });
        process.exit(1);
      },
    );
  };
}

async function serve(config: Config): Promise<void> {
  const runtime = await createRuntime(config);
  warnDevelopment(config, runtime.log);
  const running = await listen(runtime);
  runtime.log.info('tollbooth listening', { url: running.url, mcp: `${running.url}/mcp`, facilitator: runtime.facilitator.mode, tools: tools.length });
  // Stop listening, let running calls finish and settle (bounded by SHUTDOWN_TIMEOUT_MS), end MCP sessions, close the store.
  const stop = onStop(runtime.log, async (signal) => {
    const inFlight = runtime.calls.inFlight;
    const stopping = running.shutdown(config.shutdownTimeoutMs); // stops listening before this returns
    runtime.log.info('shutting down', { signal, inFlight, timeoutMs: config.shutdownTimeoutMs });
    const drained = await stopping;
    await runtime.close();
    runtime.log.info('stopped', { drained });
    return drained;
  });
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  installProcessPolicy(runtime.log, runtime.metrics, stop);
}

async function stdio(config: Config): Promise<void> {
  const runtime = await createRuntime(config);
  warnDevelopment(config, runtime.log);
  const server = await newMcpServer(runtime);
  const transport = new StdioServerTransport();
  // On stdin's end or a signal: let running calls finish and settle (their answers still go to stdout), then close.
  const stop = onStop(runtime.log, async (reason) => {
    runtime.log.info('shutting down', { reason, inFlight: runtime.calls.inFlight, timeoutMs: config.shutdownTimeoutMs });
    const drained = await runtime.calls.drain(config.shutdownTimeoutMs);
    if (!drained) runtime.log.error('shutdown time limit reached with calls still running', { inFlight: runtime.calls.inFlight });
    // A finished call's answer is written by the SDK a few promise steps later; closing first would drop it.
    await new Promise((resolve) => setImmediate(resolve));
    await server.close();
    await runtime.close();
    return drained;
  });
  transport.onclose = () => stop('transport closed');
  process.stdin.once('end', () => stop('stdin closed'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  installProcessPolicy(runtime.log, runtime.metrics, stop);
  await server.connect(transport);
  runtime.log.info('tollbooth MCP stdio ready', { tools: tools.length, facilitator: runtime.facilitator.mode });
}

function listTools(config: Config): void {
  for (const tool of tools) {
    const price = priceSummary(config, tool);
    process.stdout.write(`${tool.name.padEnd(22)} ${tool.method.padEnd(5)} ${tool.path.padEnd(30)} ${price.display}\n`);
  }
}

function mcpConfig(config: Config): void {
  const cli = fileURLToPath(import.meta.url);
  const { budget } = config.client;
  const remote = config.client.remote.tools ?? config.baseUrls.tools.replace(/\/$/, '');
  const entries = {
    mcpServers: {
      tollbooth: { command: process.execPath, args: [cli, 'stdio'], env: { DATA_DIR: config.dataDir } },
      'tollbooth-http': { type: 'http', url: `${config.baseUrls.tools.replace(/\/$/, '')}/mcp` },
      // Pays a remote deployment from the agent's own wallet under its budget; the wallet key stays in a file.
      'tollbooth-remote': {
        command: process.execPath,
        args: [cli, 'stdio', '--remote', remote],
        env: {
          DATA_DIR: config.dataDir,
          WALLET_EVM_PRIVATE_KEY_FILE: '/absolute/path/to/evm.key',
          BUDGET_MAX_USD_PER_CALL: String(budget.maxUsdPerCall),
          BUDGET_MAX_USD_PER_DAY: String(budget.maxUsdPerDay),
          ...(budget.askAboveUsd === undefined ? {} : { BUDGET_ASK_ABOVE_USD: String(budget.askAboveUsd) }),
        },
      },
    },
  };
  process.stdout.write(JSON.stringify(entries, null, 2) + '\n');
}

async function main(argv: string[]): Promise<void> {
  const command = argv[0] ?? 'serve';
  if (command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE + '\n');
    return;
  }
  if (command === '--version' || command === 'version') {
    process.stdout.write(VERSION + '\n');
    return;
  }
  if (command === 'call') {
    process.exitCode = await runCall(argv.slice(1));
    return;
  }
  const config = loadConfig(command === 'stdio' ? { ...process.env, ...remoteOverrides(argv.slice(1)) } : process.env);
  if (command === 'stdio' && Object.keys(config.client.remote).length > 0) return runRemoteStdio(config, createLogger(config.logLevel));
  switch (command) {
    case 'serve':
      return serve(config);
    case 'stdio':
      return stdio(config);
    case 'tools':
      return listTools(config);
    case 'mcp-config':
      return mcpConfig(config);
    case 'receipts':
      process.exitCode = await runReceipts(config, argv.slice(1));
      return;
    default:
      process.stderr.write(`Unknown command "${command}".\n\n${USAGE}\n`);
      process.exit(2);
  }
}

// A reader that closes early (`tollbooth tools | head`) is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
});

main(process.argv.slice(2)).catch((err: unknown) => {
  const log = createLogger();
  if (err instanceof ConfigError) {
    log.error(err.message);
    process.exit(78);
  }
  log.error('tollbooth failed to start', { error: String((err as Error)?.stack ?? err) });
  process.exit(1);
});
