import type {
  AssetAmount,
  Network,
  PaymentFlowConfig,
  PaymentRequirements,
  Price,
  SchemeNetworkServer,
} from '@x402/core/types';
import { convertToTokenAmount, parseMoney } from '@x402/core/utils';
import type { NetworkEntry } from '../../../shared/networks.js';

/**
 * The `exact` scheme on Stellar, resource-server side, written against @x402/core 2.27's `SchemeNetworkServer`
 * (the official @x402/stellar 2.9 server scheme predates `defaultAssetTransferMethod`/`paymentFlows` and makes
 * the 2.27 resource server throw). Prices are SEP-41 token units of the network entry's asset (7 decimals for
 * Stellar USDC); fees are always sponsored.
 */
export class ExactStellarServerScheme implements SchemeNetworkServer {
  readonly scheme = 'exact';
  /** Stellar `exact` has one way to move the asset (a SEP-41 transfer); "default" is the SDK's name for that. */
  readonly defaultAssetTransferMethod = 'default';
  /** Verify before the handler, settle after it succeeded. */
  readonly paymentFlows: Readonly<Record<string, PaymentFlowConfig>> = {
    default: { supported: ['authorization'], default: 'authorization' },
  };

  constructor(private readonly net: NetworkEntry) {}

  /** Converts a dollar price to units of the network's asset, or passes an explicit asset amount through. */
  async parsePrice(price: Price, _network: Network): Promise<AssetAmount> {
    if (typeof price === 'object') return { amount: price.amount, asset: price.asset, extra: price.extra ?? {} };
    return {
      amount: convertToTokenAmount(parseMoney(price).amount, this.net.decimals),
      asset: this.net.asset,
      extra: {},
    };
  }

  /** Decimals of the network's asset (settlement overrides in dollars need them). */
  getAssetDecimals(asset: string): number | undefined {
    return asset === this.net.asset ? this.net.decimals : undefined;
  }

  /** Marks the requirements as fee-sponsored, as the x402 Stellar spec requires. */
  async enhancePaymentRequirements(requirements: PaymentRequirements): Promise<PaymentRequirements> {
    return { ...requirements, extra: { ...requirements.extra, areFeesSponsored: true } };
  }
}
