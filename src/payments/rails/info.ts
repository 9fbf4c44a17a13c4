/**
 * What each rail is, without its chain SDK: id, family, scheme, protocol version, the requirements it handles and the
 * network ids it is paid on. The rail modules (evm/exact.ts, svm/rail.ts, …) add the SDK part to these.
 */
import type { PaymentRequirements } from '@x402/core/types';
import { isShortNetworkName } from '../reading/match.js';
import { V1_NETWORK_NAMES } from '../../shared/networks.js';
import type { RailInfo } from './rail.js';

const transferMethod = (req: PaymentRequirements) =>
  (req.extra as Record<string, unknown> | undefined)?.assetTransferMethod;

export { V1_NETWORK_NAMES } from '../../shared/networks.js';

/** `exact` on EVM with an EIP-3009 `transferWithAuthorization` (the default EVM rail). */
export const EVM_EXACT: RailInfo = {
  id: 'evm-exact',
  family: 'evm',
  scheme: 'exact',
  handles: (req) => req.scheme === 'exact' && !transferMethod(req),
};

/** `upto` on EVM through Permit2 and the x402 upto proxy. */
export const EVM_UPTO: RailInfo = {
  id: 'evm-upto',
  family: 'evm',
  scheme: 'upto',
  handles: (req) => req.scheme === 'upto' && transferMethod(req) === 'permit2',
};

/** Version-1 `exact` on EVM (EIP-3009), matched on scheme + short network name. */
export const EVM_EXACT_V1: RailInfo = {
  id: 'evm-exact-v1',
  family: 'evm',
  scheme: 'exact',
  x402Version: 1,
  networkIds: (net) => [...(V1_NETWORK_NAMES[net.id] ?? [])],
  handles: (req) => req.scheme === 'exact' && isShortNetworkName(req.network),
};

/** `exact` on Algorand (an atomic group with an ASA transfer). */
export const ALGORAND_EXACT: RailInfo = {
  id: 'algorand-exact',
  family: 'algorand',
  scheme: 'exact',
  handles: (req) => req.scheme === 'exact',
};

/** `exact` on Solana (a partially signed SPL transfer). */
export const SVM_EXACT: RailInfo = {
  id: 'svm-exact',
  family: 'svm',
  scheme: 'exact',
  handles: (req) => req.scheme === 'exact',
};

/** `exact` on Stellar (a Soroban token transfer with signed authorization entries). */
export const STELLAR_EXACT: RailInfo = {
  id: 'stellar-exact',
  family: 'stellar',
  scheme: 'exact',
  handles: (req) => req.scheme === 'exact',
};
