import type { AgentConfig } from '../agent/settings.js';
import type { Config } from '../config/config.js';
import { isPaidEndpoint } from '../shared/tool-endpoint.js';
import type { CliCommand } from './command.js';
import { REMOTE_OPTIONS, REMOTE_USAGE, remoteFlags, remoteSettings, type RemoteFlag } from './remote-flags.js';
import { TESTNET_OPTION, TESTNET_USAGE, networkSetSettings } from './testnet-flag.js';

/** `tollbooth stdio`: MCP over stdio, serving the tools here or paying a remote deployment (remote mode). */
export const stdioCommand: CliCommand = {
  usage: `tollbooth stdio [--testnet] [--remote [<prefix>=]<url>]... [--remote-tools|--remote-token|--remote-smm|--remote-transfers <url>]

  MCP over stdio for agents that spawn the server (stdout carries the protocol; logs go to stderr).
  Without --remote (and REMOTE_URL*), the tools run here and each call is paid with x402 by the client.
  With --remote, remote mode: the tools each remote publishes (its MCP endpoint's tools/list, else its
  /.well-known/x402), paid from the user's wallet (WALLET_*) under the user's budget (BUDGET_*), with x402 or MPP
  (PAYMENT_PROTOCOLS). See docs/agents.md.

${TESTNET_USAGE}
                    (with --remote: the agent pays on a testnet only, unless BUDGET_NETWORKS says otherwise)
${REMOTE_USAGE}`,
  options: { ...REMOTE_OPTIONS, ...TESTNET_OPTION },
  async run(args) {
    const env = { ...process.env, ...remoteSettings(args.values), ...networkSetSettings(args) };
    const [{ loadConfig }, { hasRemote, loadAgentConfig }, { listingConfigProblems }] = await Promise.all([
      import('../config/config.js'),
      import('../agent/settings.js'),
      import('./start-failure.js'),
    ]);
    // A refused configuration is listed whole, every problem of both sides at once.
    const [config, agentConfig] = await listingConfigProblems(
      'stdio',
      env,
      () => [loadConfig(env), loadAgentConfig(env)] as const,
    );
    // Lookalike variable names (WALLET_EVM_PRIVATE_KY) are warned about on stderr; stdio never refuses them.
    const [{ unknownVariables, warnLookalikes }, { createLogger }] = await Promise.all([
      import('./env-check.js'),
      import('../shared/log.js'),
    ]);
    warnLookalikes(unknownVariables(env), createLogger(agentConfig.logLevel));
    await (hasRemote(agentConfig) ? serveRemote(agentConfig, remoteFlags(args.values)) : serveLocal(config));
    return undefined;
  },
};

/** Remote mode: the agent's executor behind an MCP server with no registry tools, paying each remote. */
async function serveRemote(agentConfig: AgentConfig, remotes: RemoteFlag[]): Promise<void> {
  // The agent's composition root: the MCP server comes from here, the tools from what the remotes publish.
  const [{ runRemoteStdio }, { agentLogger }, { createMcpServer }, { VERSION }, { openStore }] = await Promise.all([
    import('../agent/stdio.js'),
    import('../agent/output.js'),
    import('../mcp/server.js'),
    import('../shared/version.js'),
    import('../store/open.js'),
  ]);
  await runRemoteStdio(agentConfig, agentLogger(agentConfig, agentConfig.logLevel), {
    ...(remotes.length > 0 ? { remotes } : {}),
    mcpServer: (executor, instructions) =>
      createMcpServer({ catalog: { tools: [], entries: [] }, version: VERSION, executor, instructions }),
    openSpends: openStore,
  });
}

/** The tools served here, each call paid by the client; stops once running calls finished (stdin's end, a signal). */
async function serveLocal(config: Config): Promise<void> {
  const [
    { BoundedStdioServerTransport },
    { createRuntime, newMcpServer },
    { installProcessPolicy },
    { offeredNetworks, onStop, stopOnSignals, warnDevelopment },
  ] = await Promise.all([
    import('../shared/stdio-transport.js'),
    import('../runtime/runtime.js'),
    import('../runtime/process-policy.js'),
    import('./lifecycle.js'),
  ]);
  // The store opens once the MCP server answers (tools/list never waits for it; paid calls do).
  const runtime = await createRuntime(config, { openStoreLater: true });
  warnDevelopment(config, runtime.log);
  const server = await newMcpServer(runtime);
  const transport = new BoundedStdioServerTransport({
    onOversizedLine: (bytes) => runtime.log.warn('stdio line over the limit discarded', { bytes }),
  });
  // On stdin's end or a signal: let running calls finish and settle (their answers still go to stdout), then close.
  const stop = onStop(runtime.log, async (reason) => {
    const { calls } = runtime;
    runtime.log.info('shutting down', { reason, inFlight: calls.inFlight, timeoutMs: config.shutdownTimeoutMs });
    const drained = await calls.drain(config.shutdownTimeoutMs);
    if (!drained)
      runtime.log.error('shutdown time limit reached with calls still running', { inFlight: calls.inFlight });
    // A finished call's answer is written by the SDK a few promise steps later; closing first would drop it.
    await new Promise((resolve) => setImmediate(resolve));
    await server.close();
    await runtime.close();
    return drained;
  });
  transport.onclose = () => stop('transport closed');
  process.stdin.once('end', () => stop('stdin closed'));
  stopOnSignals(stop);
  installProcessPolicy(runtime.log, runtime.metrics, stop);
  await server.connect(transport);
  runtime.log.info('tollbooth MCP stdio ready', {
    tools: runtime.serverDeps.tools.filter(isPaidEndpoint).length, // the paid tools
    networkSet: config.networkSet,
    networks: offeredNetworks(config, runtime.serverDeps.broker.book),
    facilitator: runtime.facilitator.mode,
  });
  // A store that cannot be opened stops the server as a failed start does.
  await runtime.started().catch(async (err: unknown) => {
    await server.close();
    await runtime.close();
    throw err;
  });
}
