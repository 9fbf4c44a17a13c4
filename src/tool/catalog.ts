import type { Config } from '../config/config.js';
import { priceSummary } from '../payments/challenges/pricing.js';
import { resourceUrl } from '../payments/challenges/requirements.js';
import type { AnyPaidToolDefinition } from './tool.js';

/** The README's tool table (name, method, path, price), generated from the definitions. */
export function toolTableMarkdown(config: Config, tools: readonly AnyPaidToolDefinition[]): string {
  const rows = tools.map((tool) => {
    const price = priceSummary(config, tool);
    const networks = price.options.length;
    const path = new URL(resourceUrl(config, tool)).pathname;
    return `| \`${tool.name}\` | ${tool.method} | \`{base_url_${tool.group}}${path}\` | $${price.usd} (x402 v${price.x402Version}, ${networks} option${networks === 1 ? '' : 's'}) |`;
  });
  return ['| Tool | Method | Path | Price per call |', '|---|---|---|---|', ...rows].join('\n');
}
