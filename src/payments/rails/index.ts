import type { PaymentRequirements } from '@x402/core/types';
import type { NetworkEntry, NetworkFamily } from '../../shared/networks.js';
import { ALGORAND_EXACT, EVM_EXACT, EVM_EXACT_V1, EVM_UPTO, STELLAR_EXACT, SVM_EXACT } from './info.js';
import type { LoadedRail, Rail, RailInfo, RailSdk } from './rail.js';

/** A rail whose module (and chain SDK) is imported the first time its SDK part is needed. */
function lazyRail(info: RailInfo, load: () => Promise<LoadedRail>): Rail {
  let loading: Promise<RailSdk> | undefined;
  return {
    ...info,
    sdk: () =>
      (loading ??= load().catch((err: unknown) => {
        loading = undefined;
        throw err;
      })),
  };
}

/** Every payment rail this server can verify and settle; the only list of them. */
export const RAILS: readonly Rail[] = [
  lazyRail(EVM_EXACT, async () => (await import('./evm/exact.js')).evmExactRail),
  lazyRail(EVM_UPTO, async () => (await import('./evm/upto.js')).evmUptoRail),
  lazyRail(EVM_EXACT_V1, async () => (await import('./evm/v1.js')).evmExactV1Rail),
  lazyRail(ALGORAND_EXACT, async () => (await import('./algorand/rail.js')).algorandExactRail),
  lazyRail(SVM_EXACT, async () => (await import('./svm/rail.js')).svmExactRail),
  lazyRail(STELLAR_EXACT, async () => (await import('./stellar/rail.js')).stellarExactRail),
];

/**
 * Loads the SDK parts of the rails of `families` one after another, yielding to the event loop between them: what a
 * server that can settle does after it started listening, so its first paid call does not load them. A rail that
 * fails to load is left to the first payment that needs it.
 */
export async function preloadRails(families: readonly NetworkFamily[], rails: readonly Rail[] = RAILS): Promise<void> {
  for (const rail of rails.filter((r) => families.includes(r.family))) {
    await new Promise((resolve) => setImmediate(resolve));
    await rail.sdk().catch(() => undefined);
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
