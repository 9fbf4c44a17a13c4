import type { CliCommand } from './command.js';
import { stringOption } from './command.js';
import { TESTNET_OPTION, TESTNET_USAGE } from './testnet-flag.js';
import { BATCH_OPTION, BATCH_USAGE, serveSwitchSettings } from './batch-flag.js';
import { isPaidEndpoint } from '../shared/tool-endpoint.js';
import type { RunningServer, Runtime } from '../runtime/runtime.js';

/** `tollbooth serve`: HTTP routes and MCP streamable HTTP at /mcp until SIGTERM/SIGINT. */
export const serveCommand: CliCommand = {
  usage: `tollbooth serve [--port <n>] [--host <address>] [--testnet] [--batch-settlement]

  Serves every tool at its HTTP route and as MCP tools over streamable HTTP at /mcp, with /healthz, /readyz,
  /metrics, /openapi.json, /.well-known/x402 and /llms.txt. Runs until SIGTERM or SIGINT, then stops taking calls,
  lets running calls finish and settle (SHUTDOWN_TIMEOUT_MS) and exits.

  --port <n>        port to listen on (default: PORT, else 4021; 0 picks a free one)
  --host <address>  address to listen on (default: HOST, else 127.0.0.1)
${TESTNET_USAGE}
${BATCH_USAGE}

  Everything else comes from the environment (PAY_TO_*, FACILITATOR_*, DATABASE_URL, ...): see .env.example.`,
  options: { port: { type: 'string' }, host: { type: 'string' }, ...TESTNET_OPTION, ...BATCH_OPTION },
  async run(args) {
    const [{ loadServerConfig, warnLookalikes }, { listingConfigProblems, portFailure }] = await Promise.all([
      import('./env-check.js'),
      import('./start-failure.js'),
    ]);
    const port = stringOption(args, 'port');
    const host = stringOption(args, 'host');
    const env = {
      ...process.env,
      ...(port !== undefined ? { PORT: port } : {}),
      ...(host !== undefined ? { HOST: host } : {}),
      ...serveSwitchSettings(args),
    };
    // Lookalike variable names (FACILITATOR_ULR) are refused in production with every other problem, else warned;
    // a refused configuration is listed whole, every problem at once.
    const { config, lookalikes } = await listingConfigProblems('serve', env, () => loadServerConfig(env));
    const [
      { createRuntime, listen },
      { installProcessPolicy },
      { offeredNetworks, onStop, stopOnSignals, warnDevelopment },
    ] = await Promise.all([
      import('../runtime/runtime.js'),
      import('../runtime/process-policy.js'),
      import('./lifecycle.js'),
    ]);
    // The store opens once the server answers (unpaid requests never wait for it; paid ones do).
    const runtime = await createRuntime(config, { openStoreLater: true });
    warnLookalikes(lookalikes, runtime.log);
    warnDevelopment(config, runtime.log);
    const running = await listen(runtime).catch(async (err: unknown) => {
      await runtime.close();
      return portFailure(err, config.port, config.host);
    });
    runtime.log.info('tollbooth listening', {
      url: running.url,
      mcp: `${running.url}/mcp`,
      networkSet: config.networkSet,
      networks: offeredNetworks(config, runtime.serverDeps.broker.book),
      facilitator: runtime.facilitator.mode,
      tools: runtime.serverDeps.tools.filter(isPaidEndpoint).length, // the paid tools
    });
    preloadOfferedRails(runtime, offeredNetworks(config, runtime.serverDeps.broker.book));
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
    stopOnSignals(stop);
    installProcessPolicy(runtime.log, runtime.metrics, stop);
    await startedOrStopped(runtime, running);
    return undefined;
  },
};

/**
 * A server that can settle loads the light server parts of the rails it offers now, in the background, and not on
 * its first paid call (the facilitator side of the chain SDKs stays unloaded on this thread).
 */
function preloadOfferedRails(runtime: Runtime, offered: readonly string[]): void {
  const { modes } = runtime.facilitator;
  const preload = runtime.config.networks.filter((n) => modes[n.family] !== 'none' && offered.includes(n.id));
  if (preload.length > 0) void import('../payments/rails/index.js').then(({ preloadRails }) => preloadRails(preload));
}

/** Opens what waits for the first answer; a store that cannot be opened stops the server as a failed start does. */
async function startedOrStopped(runtime: Runtime, running: RunningServer): Promise<void> {
  await runtime.started().catch(async (err: unknown) => {
    await running.close();
    await runtime.close();
    throw err;
  });
}
