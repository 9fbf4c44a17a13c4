import { silentLogger } from '../../src/shared/log.js';
import type { Providers } from '../../src/providers/index.js';
import type { ToolState } from '../../src/store/tool-state.js';
import type { ToolContext } from '../../src/tool/tool.js';
import { runJob } from '../../src/workers/jobs.js';

const noStore = new Proxy({} as ToolState, {
  get(_target, prop) {
    throw new Error(`store.${String(prop)} is not available in this test context`);
  },
});

const noProviders = new Proxy({} as Providers, {
  get(_target, prop) {
    throw new Error(`providers.${String(prop)} is not available in this test context; pass providers in the overrides`);
  },
});

/** A handler context for calling a tool's handler directly in a unit test. */
export function testContext(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    providers: noProviders,
    store: noStore,
    log: silentLogger,
    signal: new AbortController().signal,
    progress: () => {},
    // Worker jobs run inline: these tests call handlers directly, without a pipeline or its worker lanes.
    offload: runJob,
    ...overrides,
  };
}
