import type { PaymentRequirements } from '@x402/core/types';
import type { NetworkEntry } from '../../shared/networks.js';
import { ALGORAND_EXACT, EVM_EXACT, EVM_EXACT_V1, EVM_UPTO, STELLAR_EXACT, SVM_EXACT } from './info.js';
import type { LoadedRail, Rail, RailInfo, RailServer } from './rail.js';

/** Loads a part of a rail once; a failed load is tried again by the next caller. */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((err: unknown) => {
      loading = undefined;
      throw err;
    }));
}

/**
 * A rail whose modules are imported the first time each part is needed: its light server part (reading payments,
 * e.g. `@x402/evm/exact/server` alone) and its whole SDK part (the facilitator side: viem and the chain SDKs).
 */
function lazyRail(info: RailInfo, loadServer: () => Promise<RailServer>, loadFull: () => Promise<LoadedRail>): Rail {
  return { ...info, server: once(loadServer), sdk: once(loadFull) };
}

/** Every payment rail this server can verify and settle; the only list of them. */
export const RAILS: readonly Rail[] = [
  lazyRail(
    EVM_EXACT,
    async () => (await import('./evm/exact-server.js')).evmExactServer,
    async () => (await import('./evm/exact.js')).evmExactRail,
  ),
  lazyRail(
    EVM_UPTO,
    async () => (await import('./evm/upto-server.js')).evmUptoServer,
    async () => (await import('./evm/upto.js')).evmUptoRail,
  ),
  lazyRail(
    EVM_EXACT_V1,
    async () => (await import('./evm/v1-server.js')).evmExactV1Server,
    async () => (await import('./evm/v1.js')).evmExactV1Rail,
  ),
  lazyRail(
    ALGORAND_EXACT,
    async () => (await import('./algorand/server.js')).algorandExactServer,
    async () => (await import('./algorand/rail.js')).algorandExactRail,
  ),
  lazyRail(
    SVM_EXACT,
    async () => (await import('./svm/server.js')).svmExactServer,
    async () => (await import('./svm/rail.js')).svmExactRail,
  ),
  lazyRail(
    STELLAR_EXACT,
    async () => (await import('./stellar/rail-server.js')).stellarExactServer,
    async () => (await import('./stellar/rail.js')).stellarExactRail,
  ),
];

/** True when a rail can be paid on a network: its family, one of the network's schemes, and a network id to be paid under. */
export function railServes(rail: RailInfo, net: NetworkEntry): boolean {
  return (
    rail.family === net.family && net.schemes.includes(rail.scheme) && (rail.networkIds?.(net) ?? [net.id]).length > 0
  );
}

/**
 * Loads the server parts of the rails paid on `nets` (the networks a server that can settle offers) one after
 * another, yielding to the event loop between them: what such a server does after it started listening, so its first
 * paid call does not load them. Only the light server parts: the facilitator side of the chain SDKs (viem for EVM
 * `exact`) loads with the first reconciliation lookup, or on the facilitator thread. A rail that fails to load is left
 * to the first payment that needs it.
 */
export async function preloadRails(nets: readonly NetworkEntry[], rails: readonly Rail[] = RAILS): Promise<void> {
  for (const rail of rails.filter((r) => nets.some((net) => railServes(r, net)))) {
    await new Promise((resolve) => setImmediate(resolve));
    await rail.server().catch(() => undefined);
  }
}

/** The x402 version a requirement belongs to: version 1 names its network the short way (`base`). */
function versionOf(requirements: PaymentRequirements): 1 | 2 {
  return requirements.network.includes(':') ? 2 : 1;
}

/** The rail that handles an advertised requirement on a network, if any (in the requirement's x402 version). */
export function railFor<R extends RailInfo>(
  requirements: PaymentRequirements,
  net: NetworkEntry,
  rails: readonly R[],
): R | undefined;
export function railFor(requirements: PaymentRequirements, net: NetworkEntry): Rail | undefined;
export function railFor(
  requirements: PaymentRequirements,
  net: NetworkEntry,
  rails: readonly RailInfo[] = RAILS,
): RailInfo | undefined {
  const version = versionOf(requirements);
  return rails.find(
    (r) =>
      (r.x402Version ?? 2) === version &&
      r.family === net.family &&
      r.scheme === requirements.scheme &&
      r.handles(requirements, net),
  );
}
