import { resolve } from 'node:path';
import type { CliCommand } from './command.js';

/** `tollbooth mcp-config`: ready MCP client entries for this install. */
export const mcpConfigCommand: CliCommand = {
  usage: `tollbooth mcp-config

  Prints MCP client entries (mcpServers JSON) for this install: first the paying remote entry with the budget and
  one network (the wallet key stays in a file you name), then the streamable-HTTP endpoint and the selling stdio
  server (which answers with prices only until PAY_TO_* and a facilitator are set).`,
  options: {},
  async run() {
    const [{ loadConfig }, { loadAgentConfig }] = await Promise.all([
      import('../config/config.js'),
      import('../agent/settings.js'),
    ]);
    const config = loadConfig(process.env);
    const agent = loadAgentConfig(process.env).settings;
    // The entry this command was started from (the installed bin, the bundle, or dist/src/cli.js in a clone).
    const cli = resolve(process.argv[1] ?? 'tollbooth');
    const { budget } = agent;
    const remote = agent.remote.tools ?? config.baseUrls.tools.replace(/\/$/, '');
    // The paying remote entry leads (agents that pay a deployment), on one network unless BUDGET_NETWORKS says more.
    const first = config.networks.find((n) => n.family === 'evm');
    const networks = budget.networks ?? (first ? [first.id] : []);
    const entries = {
      mcpServers: {
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
            ...(networks.length > 0 ? { BUDGET_NETWORKS: networks.join(',') } : {}),
          },
        },
        'tollbooth-http': { type: 'http', url: `${config.baseUrls.tools.replace(/\/$/, '')}/mcp` },
        tollbooth: { command: process.execPath, args: [cli, 'stdio'], env: { DATA_DIR: config.dataDir } },
      },
    };
    process.stdout.write(JSON.stringify(entries, null, 2) + '\n');
    return 0;
  },
};
