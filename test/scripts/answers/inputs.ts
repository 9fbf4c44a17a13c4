/**
 * The catalog as the server itself lists it (GET /), and the inputs each tool is called with: a valid one that the
 * look-alike upstreams can answer the same way on every run, and an invalid one.
 */
import { RawClient } from './http.js';

/** One tool of the server's catalog. */
export interface CatalogTool {
  name: string;
  method: 'GET' | 'POST';
  /** Path template (`:param` kept) and the path the recorder calls (parameters filled in). */
  template: string;
  path: string;
  paid: boolean;
}

/** Valid inputs, chosen to answer the same on every run (daily candles, fixture tickers and tokens). */
const VALID: Record<string, Record<string, unknown>> = {
  'crypto-indicators': { coin: 'BTC', interval: '1d', limit: 60, points: 3, indicators: ['rsi', 'macd', 'ema'] },
  'development-indicator': { country: 'BR', indicator: 'NY.GDP.MKTP.CD', startYear: 2018, endYear: 2023 },
  stablecoins: { peg: 'USD', limit: 3 },
  'perp-klines': { coin: 'ETH', interval: '1d', limit: 5 },
  'testnet-fund': { address: '0x000000000000000000000000000000000000dEaD', token: 'usdc', network: 'base-sepolia' },
  'venue-event': { eventTicker: 'KXFEDDECISION-25DEC' },
  'wallet-readiness': { address: '0x000000000000000000000000000000000000dEaD' },
  'dex-top-pools': { chain: 'Ethereum', limit: 3 },
  annuity: { payment: 100, ratePerPeriod: 0.05, periods: 10, type: 'ordinary' },
  'solidity-scan': {
    source:
      '// SPDX-License-Identifier: MIT\npragma solidity ^0.8.20;\ncontract Vault { function owner() external view returns (address) { return tx.origin; } }\n',
  },
  'password-strength': { password: 'correct horse battery staple' },
  'geo-distance': { from: { lat: 51.5074, lng: -0.1278 }, to: { lat: 48.8566, lng: 2.3522 } },
  'card-validate': { number: '4242 4242 4242 4242' },
  'token-report': { chain: 'base', token: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' },
  'smm-order': { link: 'https://www.instagram.com/p/C0ffee/', quantity: 100, serviceId: 1 },
  'transfers-evm': { address: '0x000000000000000000000000000000000000dEaD', limit: 5 },
  'smm-quote': { serviceId: 1, quantity: 100 },
  'smm-services': { q: 'followers', limit: 2 },
  'smm-order-status': {},
};

/** Path parameters of free tools with a parameterised path. */
const PATH_PARAMS: Record<string, string> = { orderId: '1' };

/** The valid input of a tool (an empty object for a tool this table does not know). */
export function validInput(tool: CatalogTool): Record<string, unknown> {
  return VALID[tool.name] ?? {};
}

/** An input every strict schema refuses: an unknown field with a value of the wrong type next to the valid ones. */
export function invalidInput(tool: CatalogTool): Record<string, unknown> {
  const valid = validInput(tool);
  const first = Object.keys(valid)[0];
  return first ? { ...valid, [first]: { not: 'this' } } : { unexpected: [1, 2, 3] };
}

/** `?a=1&b=2` of an input (GET tools), or '' for no input. */
export function queryOf(input: Record<string, unknown> | undefined): string {
  if (!input || Object.keys(input).length === 0) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(input)) params.append(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
  return `?${params}`;
}

/** Reads the catalog from GET / of the server (name, method, URL, price). */
export async function readCatalog(client: RawClient): Promise<CatalogTool[]> {
  const home = await client.send({ method: 'GET', path: '/', headers: [] });
  const doc = JSON.parse(home.body.toString('utf8')) as {
    tools: Array<{ name: string; method: 'GET' | 'POST'; url: string; price: string }>;
  };
  return doc.tools.map((t) => {
    const template = new URL(t.url).pathname;
    const path = template.replace(/:(\w+)/g, (_m, name: string) => PATH_PARAMS[name] ?? '1');
    return { name: t.name, method: t.method, template, path, paid: t.price !== 'free' };
  });
}
