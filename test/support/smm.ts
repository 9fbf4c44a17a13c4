import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../src/shared/log.js';
import type { Providers } from '../../src/providers/index.js';
import { createSmmPanelProvider } from '../../src/providers/smm/panel.js';
import { SqliteStore } from '../../src/store/dialects/sqlite/store.js';
import type { ToolContext } from '../../src/tool/tool.js';
import { testContext } from './context.js';
import { upstreamFor } from './upstreams/open-data.js';
import {
  PANEL_KEY,
  startSmmPanelLookalike,
  type SmmPanelLookalike,
  type SmmPanelLookalikeOptions,
} from './upstreams/smm-panel.js';

/** A panel look-alike, a SQLite store in a temporary directory and handler contexts wired to both, for smm tool tests. */
export interface SmmTestbed {
  panel: SmmPanelLookalike;
  store: SqliteStore;
  /** Who paid, as a paid handler sees it. */
  payer: { payer: string; replayKey: string };
  ctx(overrides?: Partial<ToolContext>): ToolContext;
  stop(): Promise<void>;
}

/** Starts the testbed (the panel look-alike with `options`); call `stop` in afterAll. */
export async function startSmmTestbed(options: SmmPanelLookalikeOptions = {}): Promise<SmmTestbed> {
  const dir = mkdtempSync(join(tmpdir(), 'tollbooth-smm-'));
  const panel = await startSmmPanelLookalike(options);
  const store = await SqliteStore.open(join(dir, 'tollbooth.db'));
  const payer = { payer: '0x1111111111111111111111111111111111111111', replayKey: 'eip155:8453:0xabc:0xnonce' };
  return {
    panel,
    store,
    payer,
    ctx: (overrides = {}) => {
      const smm = createSmmPanelProvider(upstreamFor('smm', `${panel.url}/api/v2`), PANEL_KEY, silentLogger);
      return testContext({
        providers: { smm } as Partial<Providers> as Providers,
        store: store.toolState,
        payer,
        ...overrides,
      });
    },
    stop: async () => {
      await store.close();
      await panel.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
