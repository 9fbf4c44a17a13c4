import type { Config } from '../../config/config.js';
import { x402VersionOf } from '../../tool/price.js';
import type { AnyPaidToolDefinition } from '../../tool/tool.js';
import { canonicalNetworkId } from '../reading/match.js';
import { acceptsFor, UNASKED, type ChallengeBook } from './requirements.js';

/** A tool's price as agents see it before calling: cheapest USD price and every accepted option. */
export interface PriceSummary {
  /** Cheapest price in US dollars, e.g. 0.001. */
  usd: number;
  /** The same, for display: `$0.001 per call`. */
  display: string;
  x402Version: 1 | 2;
  options: Array<{ scheme: string; network: string; amount: string; asset: string; usd: number }>;
}

/** Summarises a tool's accepted payment options (under start-up's `book`) in US dollars (stablecoins counted at par). */
export function priceSummary(config: Config, tool: AnyPaidToolDefinition, book: ChallengeBook = UNASKED): PriceSummary {
  const accepts = acceptsFor(config, tool, book) as unknown as Array<Record<string, string>>;
  const options = accepts.map((a) => {
    const network = a.network ?? '';
    const entry = config.networks.find((n) => n.id === canonicalNetworkId(network));
    const amount = a.amount ?? a.maxAmountRequired ?? '0';
    const usd = Number(amount) / 10 ** (entry?.decimals ?? 6);
    return { scheme: a.scheme ?? 'exact', network, amount, asset: a.asset ?? '', usd };
  });
  const usd = Math.min(...options.map((o) => o.usd));
  return {
    usd,
    display: `$${usd} per call`,
    x402Version: x402VersionOf(tool),
    options,
  };
}
