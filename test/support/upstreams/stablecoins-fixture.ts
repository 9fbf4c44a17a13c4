// The data the DefiLlama stablecoins look-alike serves by default (its fixture coins and FX rates).
import type { CoinSpec } from './stablecoins.js';

const B = 1e9;
const M = 1e6;

/** One fixture coin's identity and price, in the order the upstream lists the fields. */
const coin = (
  id: string,
  name: string,
  symbol: string,
  gecko_id: string | null,
  pegType: string,
  pegMechanism: CoinSpec['pegMechanism'],
  price: number | null,
) => ({ id, name, symbol, gecko_id, pegType, pegMechanism, price });

/** The default fixture: real names and ids, made-up amounts of a realistic order. */
export const STABLECOIN_FIXTURE: CoinSpec[] = [
  {
    ...coin('1', 'Tether', 'USDT', 'tether', 'peggedUSD', 'fiat-backed', 1.0002),
    chains: {
      Tron: [80.1 * B, 79.8 * B, 78.9 * B, 75.2 * B],
      Ethereum: [72.4 * B, 72.0 * B, 71.1 * B, 69.0 * B],
      BSC: [6.3 * B, 6.3 * B, 6.2 * B, 5.9 * B],
      Solana: [2.4 * B, 2.41 * B, 2.5 * B, 2.2 * B],
      Arbitrum: [1.1 * B, 1.1 * B, 1.05 * B, 0.98 * B],
      'Hyperliquid L1': [0.52 * B, 0.5 * B, 0.41 * B, null],
    },
  },
  {
    ...coin('2', 'USD Coin', 'USDC', 'usd-coin', 'peggedUSD', 'fiat-backed', 0.9998),
    chains: {
      Ethereum: [46.1 * B, 45.9 * B, 45.2 * B, 46.6 * B],
      Solana: [9.02 * B, 8.9 * B, 8.7 * B, 8.8 * B],
      Base: [4.1 * B, 4.05 * B, 3.95 * B, 3.7 * B],
      Arbitrum: [2.61 * B, 2.6 * B, 2.55 * B, 2.7 * B],
      Polygon: [0.94 * B, 0.95 * B, 0.96 * B, 0.99 * B],
      Avalanche: [0.71 * B, 0.7 * B, 0.72 * B, 0.75 * B],
    },
  },
  {
    ...coin('146', 'Ethena USDe', 'USDe', 'ethena-usde', 'peggedUSD', 'crypto-backed', 1.0005),
    chains: {
      Ethereum: [13.6 * B, 13.4 * B, 12.9 * B, 11.8 * B],
      Arbitrum: [0.21 * B, 0.2 * B, 0.19 * B, 0.15 * B],
      Base: [0.08 * B, 0.08 * B, 0.07 * B, 0.05 * B],
    },
  },
  {
    ...coin('209', 'Sky Dollar', 'USDS', 'usds', 'peggedUSD', 'crypto-backed', 1.0001),
    chains: {
      Ethereum: [7.9 * B, 7.85 * B, 7.7 * B, 7.1 * B],
      Base: [0.24 * B, 0.24 * B, 0.23 * B, 0.2 * B],
      Solana: [0.03 * B, 0.03 * B, 0.03 * B, 0.02 * B],
    },
  },
  {
    ...coin('5', 'Dai', 'DAI', 'dai', 'peggedUSD', 'crypto-backed', 0.9999),
    chains: {
      Ethereum: [4.9 * B, 4.95 * B, 5.0 * B, 5.2 * B],
      Polygon: [0.12 * B, 0.12 * B, 0.12 * B, 0.13 * B],
      BSC: [0.09 * B, 0.09 * B, 0.09 * B, 0.1 * B],
      Base: [0.05 * B, 0.05 * B, 0.05 * B, 0.05 * B],
    },
  },
  {
    ...coin('119', 'First Digital USD', 'FDUSD', 'first-digital-usd', 'peggedUSD', 'fiat-backed', 0.9981),
    chains: {
      BSC: [1.31 * B, 1.35 * B, 1.42 * B, 1.6 * B],
      Ethereum: [0.4 * B, 0.41 * B, 0.43 * B, 0.5 * B],
      Sui: [0.02 * B, 0.02 * B, 0.02 * B, 0.01 * B],
    },
  },
  {
    ...coin('120', 'PayPal USD', 'PYUSD', 'paypal-usd', 'peggedUSD', 'fiat-backed', 1.0),
    chains: { Ethereum: [0.62 * B, 0.61 * B, 0.6 * B, 0.55 * B], Solana: [0.41 * B, 0.4 * B, 0.37 * B, 0.3 * B] },
  },
  {
    ...coin('223', 'Global Dollar', 'USDG', 'global-dollar', 'peggedUSD', 'fiat-backed', 1.0),
    chains: {
      Ethereum: [0.31 * B, null, null, null],
      Solana: [0.09 * B, null, null, null],
      'Robinhood Chain': [0.02 * B, null, null, null],
    },
  },
  {
    ...coin('3', 'TerraClassicUSD', 'USTC', 'terrausd', 'peggedUSD', 'algorithmic', 0.0142),
    chains: { 'Terra Classic': [9.62 * B, 9.62 * B, 9.63 * B, 9.65 * B], Ethereum: [0.001 * B, null, null, null] },
    missingAs: 'zero',
  },
  {
    ...coin('192', 'Bucket USD', 'BUCK', 'bucket-protocol-buck-stablecoin', 'peggedUSD', 'crypto-backed', null),
    chains: { Sui: [55 * M, 54 * M, null, 60 * M] },
  },
  {
    ...coin('50', 'EURC', 'EURC', 'euro-coin', 'peggedEUR', 'fiat-backed', 1.0855),
    chains: {
      Ethereum: [180 * M, 178 * M, 171 * M, 150 * M],
      Solana: [38 * M, 37 * M, 35 * M, 30 * M],
      Base: [12 * M, 12 * M, 11 * M, 9 * M],
      Avalanche: [4 * M, 4 * M, 4 * M, 4 * M],
    },
  },
  {
    ...coin('52', 'STASIS EURO', 'EURS', 'stasis-eurs', 'peggedEUR', 'fiat-backed', 1.0712),
    chains: { Ethereum: [131 * M, 131 * M, 131 * M, 133 * M], Polygon: [1.2 * M, 1.2 * M, 1.2 * M, 1.1 * M] },
  },
  {
    ...coin('101', 'Monerium EUR emoney', 'EURe', 'monerium-eur-money', 'peggedEUR', 'fiat-backed', null),
    chains: { Gnosis: [28 * M, 27 * M, 26 * M, 22 * M], Ethereum: [6 * M, 6 * M, 6 * M, 5 * M] },
  },
  {
    ...coin('137', 'JPY Coin', 'JPYC', 'jpyc', 'peggedJPY', 'fiat-backed', 0.00671),
    chains: { Polygon: [1.05 * B, 1.04 * B, 1.0 * B, 0.9 * B], Ethereum: [0.2 * B, 0.2 * B, 0.2 * B, 0.19 * B] },
  },
  {
    ...coin('97', 'Poundtoken', 'GBPT', 'poundtoken', 'peggedGBP', 'fiat-backed', 1.2644),
    chains: { Ethereum: [1.5 * M, 1.5 * M, 1.5 * M, 1.6 * M] },
  },
  {
    ...coin('58', 'CryptoFranc', 'XCHF', 'cryptofranc', 'peggedCHF', 'fiat-backed', 1.1302),
    chains: { Ethereum: [6.1 * M, 6.1 * M, 6.0 * M, 6.2 * M] },
  },
  {
    ...coin('65', 'Frax Price Index', 'FPI', 'frax-price-index', 'peggedVAR', 'crypto-backed', 1.1107),
    chains: { Ethereum: [63 * M, 63 * M, 62 * M, 61 * M], Arbitrum: [2 * M, 2 * M, 2 * M, 2 * M] },
  },
];

/** Units of each currency per US dollar, newest snapshot (openexchangerates form, as `/rates` serves it). */
export const FX_FIXTURE: Record<string, number> = { USD: 1, EUR: 0.9213, JPY: 148.72, GBP: 0.7906, CHF: 0.8841 };
