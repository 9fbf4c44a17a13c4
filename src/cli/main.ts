/**
 * `tollbooth <command>`: the command table and the dispatch. Each command's module (and whatever it needs: the
 * runtime, the MCP SDK, the agent's wallets) loads only when that command runs, so `tollbooth help` or a `--help`
 * loads almost nothing.
 */
import { ConfigError } from '../config/config.js';
import { createLogger, scrubUrlCredentials } from '../shared/log.js';
import { VERSION } from '../shared/version.js';
import { parseCommandArgs, USAGE_EXIT, UsageError, type CliCommand } from './command.js';
import { CONFIG_EXIT, readableConfigMessage, StartFailure } from './start-failure.js';

/** Every command: a one-line summary for `tollbooth help`, and its module. */
const COMMANDS: Record<string, { summary: string; load: () => Promise<CliCommand<any>> }> = {
  serve: {
    summary: 'HTTP routes + MCP streamable HTTP at /mcp (the default command)',
    load: async () => (await import('./serve.js')).serveCommand,
  },
  stdio: {
    summary: 'MCP over stdio for agents that spawn the server; --remote: pay a remote deployment',
    load: async () => (await import('./stdio.js')).stdioCommand,
  },
  call: {
    summary: 'one paid call of a remote tool for scripts: JSON result on stdout',
    load: async () => (await import('./call.js')).callCommand,
  },
  fetch: {
    summary: 'curl-like request to any x402 or MPP seller, paid under the budget: body on stdout',
    load: async () => (await import('./fetch.js')).fetchCommand,
  },
  search: {
    summary: 'find paid services in the discovery indexes (AGENT_DISCOVERY_URLS): price, URL, networks',
    load: async () => (await import('./search.js')).searchCommand,
  },
  tools: {
    summary: 'list the tools (paid and free) with method, path and price',
    load: async () => (await import('./tools.js')).toolsCommand,
  },
  'mcp-config': {
    summary: 'print ready MCP client entries for this install',
    load: async () => (await import('./mcp-config.js')).mcpConfigCommand,
  },
  config: {
    summary: "the effective configuration with each value's source (secrets never shown); --check: validate only",
    load: async () => (await import('./config.js')).configCommand,
  },
  receipts: {
    summary: 'settled, pending and failed payments with totals (DATABASE_URL or DATA_DIR)',
    load: async () => (await import('./receipts.js')).receiptsCommand,
  },
  spending: {
    summary: "the agent's own payments (stdio --remote, call) against its daily budget",
    load: async () => (await import('./spending.js')).spendingCommand,
  },
  channels: {
    summary: "the seller's batch-settlement channels: payer, network, balance, charged, claimed, idle time",
    load: async () => (await import('./channels.js')).channelsCommand,
  },
  deposits: {
    summary: "the agent's batch-settlement channels: deposits, charges, refunds (--refund)",
    load: async () => (await import('./deposits.js')).depositsCommand,
  },
};

/** The text of `tollbooth help`. */
export function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  const lines = Object.entries(COMMANDS).map(([name, { summary }]) => `  tollbooth ${name.padEnd(width)}  ${summary}`);
  return `tollbooth ${VERSION}: pay-per-call tools for AI agents (x402 over HTTP and MCP)

Usage:
${lines.join('\n')}
  tollbooth help [command]  this text, or one command's options (also: tollbooth <command> --help)
  tollbooth version

Configuration comes from the environment (see .env.example and docs/operators.md); tollbooth config shows it.`;
}

/** Writes a startup failure: plain text on a terminal, one JSON log line otherwise (supervisors read JSON). */
function reportFailure(message: string): void {
  const text = scrubUrlCredentials(message);
  if (process.stderr.isTTY) process.stderr.write(`tollbooth: ${text}\n`);
  else createLogger().error(text);
}

/** Runs one command line; resolves to the exit code, or undefined while a server command keeps running. */
export async function main(argv: readonly string[]): Promise<number | undefined> {
  const [first, ...rest] = argv;
  if (first === 'help' || first === '--help' || first === '-h') {
    const named = first === 'help' ? rest[0] : undefined;
    const entry = named ? COMMANDS[named] : undefined;
    if (named && !entry) return unknownCommand(named);
    process.stdout.write(`${entry ? (await entry.load()).usage : usage()}\n`);
    return 0;
  }
  if (first === 'version' || first === '--version' || first === '-v') {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const name = first === undefined || first.startsWith('-') ? 'serve' : first;
  const entry = COMMANDS[name];
  if (!entry) return unknownCommand(name);
  const command = await entry.load();
  const args = name === first ? rest : argv;
  try {
    const parsed = parseCommandArgs(command, args);
    if (parsed === 'help') {
      process.stdout.write(`${command.usage}\n`);
      return 0;
    }
    return await command.run(parsed);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`tollbooth ${name}: ${err.message}\n\nUsage: ${command.usage}\n`);
      return USAGE_EXIT;
    }
    if (err instanceof StartFailure) {
      process.stderr.write(`${scrubUrlCredentials(err.message)}\n`);
      return err.exitCode;
    }
    if (err instanceof ConfigError) {
      process.stderr.write(
        `tollbooth ${name}: invalid configuration:\n${readableConfigMessage(scrubUrlCredentials(err.message))}\n`,
      );
      return CONFIG_EXIT;
    }
    reportFailure(`tollbooth failed to start: ${String((err as Error)?.message ?? err)}`);
    return 1;
  }
}

function unknownCommand(name: string): number {
  process.stderr.write(`Unknown command "${name}".\n\n${usage()}\n`);
  return USAGE_EXIT;
}
