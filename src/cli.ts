#!/usr/bin/env node
import { fileURLToPath } from 'node:url';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger, type Logger } from './log.js';
import { priceSummary } from './payments/pricing.js';
import { runReceipts } from './receipts.js';
import { createRuntime, listen, newMcpServer } from './runtime.js';
import { tools } from '../tools/index.js';
import { VERSION } from './version.js';

const USAGE = `tollbooth ${VERSION}: pay-per-call tools for AI agents (x402 over HTTP and MCP)

Usage:
  tollbooth serve     HTTP routes + MCP streamable HTTP at /mcp (default; PORT, default 4021)
  tollbooth stdio     MCP over stdio (for agents that spawn the server)
  tollbooth tools     list the tools with method, path and price
  tollbooth mcp-config   print ready MCP client entries (stdio + streamable HTTP) for this install
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

async function serve(config: Config): Promise<void> {
  const runtime = await createRuntime(config);
  warnDevelopment(config, runtime.log);
  const running = await listen(runtime);
  runtime.log.info('tollbooth listening', { url: running.url, mcp: `${running.url}/mcp`, facilitator: runtime.facilitator.mode, tools: tools.length });
  const stop = async (signal: string) => {
    runtime.log.info('shutting down', { signal });
    await running.close();
    await runtime.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

async function stdio(config: Config): Promise<void> {
  const runtime = await createRuntime(config);
  warnDevelopment(config, runtime.log);
  const server = newMcpServer(runtime);
  const transport = new StdioServerTransport();
  transport.onclose = () => {
    void runtime.close().then(() => process.exit(0));
  };
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
  const entries = {
    mcpServers: {
      tollbooth: { command: process.execPath, args: [cli, 'stdio'], env: { DATA_DIR: config.dataDir } },
      'tollbooth-http': { type: 'http', url: `${config.baseUrls.tools.replace(/\/$/, '')}/mcp` },
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
  const config = loadConfig(process.env);
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
