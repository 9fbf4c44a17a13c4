import type { PaymentRequirements } from '@x402/core/types';
import type { NetworkEntry } from '../networks.js';
import { algorandExactRail } from './algorand.js';
import { evmExactRail } from './evm-exact.js';
import { evmUptoRail } from './evm-upto.js';
import { evmExactV1Rail } from './evm-v1.js';
import type { Rail } from './rail.js';
import { stellarExactRail } from './stellar.js';
import { svmExactRail } from './svm.js';

/** Every payment rail this server can verify and settle; the only list of them. */
export const RAILS: readonly Rail[] = [evmExactRail, evmUptoRail, evmExactV1Rail, algorandExactRail, svmExactRail, stellarExactRail];

/** The x402 version a requirement belongs to: version 1 names its network the short way (`base`). */
function versionOf(requirements: PaymentRequirements): 1 | 2 {
  return requirements.network.includes(':') ? 2 : 1;
}

/** The rail that handles an advertised requirement on a network, if any (in the requirement's x402 version). */
export function railFor(requirements: PaymentRequirements, net: NetworkEntry, rails: readonly Rail[] = RAILS): Rail | undefined {
  const version = versionOf(requirements);
  return rails.find((r) => (r.x402Version ?? 2) === version && r.family === net.family && r.scheme === requirements.scheme && r.handles(requirements, net));
}
