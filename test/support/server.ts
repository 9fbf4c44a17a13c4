import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger, type Logger } from '../../src/shared/log.js';
import { createRuntime, listen, type Runtime } from '../../src/runtime/runtime.js';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { freeTools } from '../../tools/index.js';
import { builtEntry } from './built.js';

/** A Tollbooth instance on a free port with its own SQLite file, for one test file. */
export interface TestServer {
  url: string;
  runtime: Runtime;
  dataDir: string;
  close(): Promise<void>;
}

/** Starts Tollbooth in-process on 127.0.0.1 with the given environment and optional registry. */
export async function startTestServer(
  env: Record<string, string> = {},
  options: { tools?: readonly AnyToolDefinition[]; log?: Logger; dataDir?: string; port?: number } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'tollbooth-test-'));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env });
  // A custom registry stands for the paid tools: the registry's free tools are served beside it.
  const tools = options.tools
    ? [...options.tools, ...freeTools.filter((f) => options.tools!.every((t) => t.name !== f.name))]
    : undefined;
  // The facilitator thread (servers with a settlement key) and the tools' threads start from the build when it is
  // fresh: see built.ts.
  const [facilitatorEntry, workerEntry] = [builtEntry('facilitator-worker'), builtEntry('tool-worker')];
  const runtime = await createRuntime(config, {
    log: options.log ?? silentLogger,
    ...(tools ? { tools } : {}),
    ...(facilitatorEntry ? { facilitatorEntry } : {}),
    ...(workerEntry ? { workerEntry } : {}),
  });
  const running = await listen(runtime, options.port ?? 0, '127.0.0.1');
  return {
    url: running.url,
    runtime,
    dataDir,
    close: async () => {
      await running.close();
      await runtime.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Decodes a base64 JSON header as x402 sends it. */
export function decodeHeader(value: string | null): unknown {
  if (value === null) throw new Error('header missing');
  return JSON.parse(Buffer.from(value, 'base64').toString('utf8'));
}
