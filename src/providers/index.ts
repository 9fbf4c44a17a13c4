import type { Config } from '../config/config.js';
import type { Logger } from '../shared/log.js';
import { createChainToolProviders, type ChainToolProviders } from './chain/tools.js';
import { createStablecoinsProvider, type StablecoinsProvider } from './market/defillama-stablecoins.js';
import { createYieldsProvider, type YieldsProvider } from './market/defillama-yields.js';
import { createDexScreenerProvider, type DexScreenerProvider } from './market/dexscreener.js';
import { createGoPlusProvider, type GoPlusProvider } from './market/goplus.js';
import { createHyperliquidProvider, type HyperliquidProvider } from './market/hyperliquid.js';
import { createKalshiProvider, type KalshiProvider } from './market/kalshi.js';
import { createSmmPanelProvider, type SmmPanelProvider } from './smm/panel.js';
import { Upstream, type UpstreamMetrics } from './upstream.js';
import { createWorldBankProvider, type WorldBankProvider } from './market/worldbank.js';

/**
 * Upstream API clients reached by handlers through their context, one module per upstream.
 */
export interface Providers extends ChainToolProviders {
  hyperliquid: HyperliquidProvider;
  stablecoins: StablecoinsProvider;
  yields: YieldsProvider;
  worldbank: WorldBankProvider;
  kalshi: KalshiProvider;
  goplus: GoPlusProvider;
  dexscreener: DexScreenerProvider;
  smm: SmmPanelProvider;
}

/** Builds the provider set from configuration: one Upstream client (cache, retries) per upstream, reporting to `metrics`. */
export function createProviders(config: Config, log: Logger, metrics?: UpstreamMetrics): Providers {
  return {
    hyperliquid: createHyperliquidProvider(new Upstream(config.upstreams.hyperliquid, log, metrics)),
    stablecoins: createStablecoinsProvider(new Upstream(config.upstreams.stablecoins, log, metrics)),
    yields: createYieldsProvider(new Upstream(config.upstreams.yields, log, metrics)),
    worldbank: createWorldBankProvider(new Upstream(config.upstreams.worldbank, log, metrics)),
    kalshi: createKalshiProvider(new Upstream(config.upstreams.kalshi, log, metrics)),
    goplus: createGoPlusProvider(new Upstream(config.upstreams.goplus, log, metrics)),
    dexscreener: createDexScreenerProvider(new Upstream(config.upstreams.dexscreener, log, metrics)),
    smm: createSmmPanelProvider(new Upstream(config.upstreams.smm, log, metrics), config.smmPanelKey, log),
    ...createChainToolProviders(config, log, metrics),
  };
}
