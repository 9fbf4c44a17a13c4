import type { AnyFreeToolDefinition, AnyToolDefinition } from '../src/tool.js';
import { annuity } from './annuity.js';
import { cardValidate } from './card-validate.js';
import { cryptoIndicators } from './crypto-indicators.js';
import { developmentIndicator } from './development-indicator.js';
import { dexTopPools } from './dex-top-pools.js';
import { geoDistance } from './geo-distance.js';
import { passwordStrength } from './password-strength.js';
import { perpKlines } from './perp-klines.js';
import { smmOrder } from './smm-order.js';
import { smmOrderStatus } from './smm-order-status.js';
import { smmQuote } from './smm-quote.js';
import { smmServices } from './smm-services.js';
import { solidityScan } from './solidity-scan.js';
import { stablecoins } from './stablecoins.js';
import { testnetFund } from './testnet-fund.js';
import { tokenReport } from './token-report.js';
import { transfersEvm } from './transfers-evm.js';
import { venueEvent } from './venue-event.js';
import { walletReadiness } from './wallet-readiness.js';

/** All 16 endpoints, in the order of the specification's price table (docs/spec-notes.md#prices-and-payment-options). */
export const tools = [
  cryptoIndicators,
  developmentIndicator,
  stablecoins,
  perpKlines,
  testnetFund,
  venueEvent,
  walletReadiness,
  dexTopPools,
  annuity,
  solidityScan,
  passwordStrength,
  geoDistance,
  cardValidate,
  tokenReport,
  smmOrder,
  transfersEvm,
] as const satisfies readonly AnyToolDefinition[];

/** The free helper endpoints (no payment), served on HTTP and MCP after the paid tools. */
export const freeTools = [smmQuote, smmServices, smmOrderStatus] as const satisfies readonly AnyFreeToolDefinition[];
