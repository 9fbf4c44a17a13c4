import type { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements, SchemeNetworkServer } from '@x402/core/types';
import type { Config } from '../../config/config.js';
import type { NetworkEntry, NetworkFamily } from '../../shared/networks.js';
import type { LookupResult, PendingSettlement } from '../../shared/chain-lookup.js';
import type { WindowRefusal } from './window.js';

export type { LookupResult, PendingSettlement } from '../../shared/chain-lookup.js';

/**
 * What a rail reads off a matched payment: the chain's single-use key and the payer, or why the payload is unusable
 * (`invalid_payment` unless a reason says otherwise: `authorization_window_too_long` for an expiry beyond the window).
 */
export type Identified =
  | { ok: true; replayKey: string; payer: string }
  | { ok: false; message: string; reason?: 'authorization_window_too_long' };

/**
 * What the in-process facilitator schemes read of the configuration: the settlement keys and the time limits (all
 * structured-cloneable, so the facilitator thread gets exactly this and nothing else of `Config`).
 */
export interface InProcessSettings {
  facilitator: Pick<Config['facilitator'], 'keys' | 'timeoutMs' | 'settleTimeoutMs'>;
}

/**
 * One way to pay (network family + scheme), as known without its chain SDK: which requirements it handles and under
 * which network ids. Everything chain-specific lives behind {@link RailSdk}; the broker never branches on a chain.
 */
export interface RailInfo {
  /** Stable id for logs and replay keys, e.g. `evm-exact`. */
  readonly id: string;
  readonly family: NetworkFamily;
  readonly scheme: 'exact' | 'upto';
  /** The x402 version this rail is paid with; absent = 2. */
  readonly x402Version?: 1 | 2;
  /** The network ids this rail is paid on for a network entry (v1 short names such as `base`); absent = the entry's id. */
  networkIds?(net: NetworkEntry): string[];
  /** True when this rail handles the advertised requirement (family, scheme and, for EVM, asset transfer method). */
  handles(requirements: PaymentRequirements, net: NetworkEntry): boolean;
}

/**
 * The light part of a rail: what reading a payment needs (its server scheme, its replay key and payer, its window),
 * without the facilitator side of its chain SDK (for EVM `exact`, the 6 modules of `@x402/evm/exact/server`, no viem).
 */
export interface RailServer {
  /** The official server-side scheme registered on the x402 resource server for a network of this rail. */
  serverScheme(net: NetworkEntry): SchemeNetworkServer;
  /** The replay key (what the chain itself makes single-use) and payer of a payment that matched our requirements. */
  identify(payload: PaymentPayload, requirements: PaymentRequirements): Identified;
  /**
   * Refuses, before the claim, a payment valid for longer than its window when telling needs the chain's state (the
   * current ledger); absent = `identify` bounds the window itself. Undefined when within it or when the chain could
   * not say (the facilitator's own check then runs at verification).
   */
  checkWindow?(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    net: NetworkEntry,
    config: Config,
  ): Promise<WindowRefusal | undefined>;
}

/** The whole SDK part of a rail: its server part, plus the in-process facilitator and reconciliation (chain SDKs). */
export interface RailSdk extends RailServer {
  /**
   * Registers this rail's facilitator scheme for the given networks on an in-process facilitator, using the
   * family's settlement key from config; returns the ids of the networks it can now verify and settle.
   */
  registerInProcess(facilitator: x402Facilitator, nets: readonly NetworkEntry[], config: InProcessSettings): string[];
  /** Asks the chain what became of a settlement whose outcome was unknown; absent = cannot tell. */
  lookup?(pending: PendingSettlement, net: NetworkEntry, config: Config): Promise<LookupResult>;
}

/**
 * A rail as the broker, the facilitators and the reconciler use it: its info, its light server part (reading
 * payments, loaded with the first payment or preloaded after start) and its whole SDK part (the facilitator thread
 * and reconciliation), each loaded on first use.
 */
export interface Rail extends RailInfo {
  /** Loads the rail's server part (a server that never sees a payment of this rail never loads it). */
  server(): Promise<RailServer>;
  /** Loads the rail's whole SDK part (the facilitator side of its chain SDK included). */
  sdk(): Promise<RailSdk>;
}

/** A rail module's whole rail: its info and its SDK part (what the tests of each rail use directly). */
export type LoadedRail = RailInfo & RailSdk;
