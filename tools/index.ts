import { isPaid, type AnyPaidToolDefinition, type AnyToolDefinition } from '../src/tool/tool.js';
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

/**
 * Every endpoint: the 16 paid tools in the order of the specification's price table
 * (docs/spec-notes.md#prices-and-payment-options), then the free helpers (no price, no payment).
 */
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
  smmQuote,
  smmServices,
  smmOrderStatus,
] as const satisfies readonly AnyToolDefinition[];

/** The paid tools of the registry, in registry order. */
export const paidTools: readonly AnyPaidToolDefinition[] = tools.filter(isPaid);

/** The free helpers of the registry (tools without a price), in registry order. */
export const freeTools: readonly AnyToolDefinition[] = tools.filter((tool) => !isPaid(tool));
