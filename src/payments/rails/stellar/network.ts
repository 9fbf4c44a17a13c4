import { Networks, rpc } from '@stellar/stellar-sdk';
import { AUTHORIZATION_SKEW_SECONDS } from '../window.js';

/** Network passphrases of the Stellar networks x402 names (CAIP-2 `stellar:<ref>`). */
const PASSPHRASES: Readonly<Record<string, string>> = {
  'stellar:pubnet': Networks.PUBLIC,
  'stellar:testnet': Networks.TESTNET,
};

/** The network passphrase of a `stellar:*` network id, or undefined when the network is not one we know. */
export function stellarPassphrase(network: string): string | undefined {
  return PASSPHRASES[network];
}

/**
 * Seconds per ledger used to turn `maxTimeoutSeconds` into a ledger bound. Stellar closes a ledger about every
 * 5 s; the x402 Stellar spec and the official client use 5 as their fallback, so a client that assumes 5 s signs
 * exactly our bound and one that measured slower ledgers signs less.
 */
export const LEDGER_SECONDS = 5;

/**
 * Ledgers of slack on the expiration bound, for a client whose view of the latest ledger was a little ahead: the same
 * {@link AUTHORIZATION_SKEW_SECONDS} every rail allows, in ledgers (12).
 */
export const EXPIRATION_TOLERANCE_LEDGERS = Math.ceil(AUTHORIZATION_SKEW_SECONDS / LEDGER_SECONDS);

/** An authorization must still be valid this many ledgers from now, so it survives the handler and settlement. */
export const MIN_REMAINING_LEDGERS = 2;

/** The latest expiration ledger we accept for a payment with the given validity window. */
export function maxExpirationLedger(currentLedger: number, maxTimeoutSeconds: number): number {
  return currentLedger + Math.ceil(maxTimeoutSeconds / LEDGER_SECONDS) + EXPIRATION_TOLERANCE_LEDGERS;
}

/**
 * A Soroban RPC client for an operator-configured URL. Plain http is accepted because the operator wrote it
 * (a node on the same host or private network); https is what docs/payments.md#stellar-exact recommends otherwise.
 */
export function stellarRpc(url: string, timeoutMs: number): rpc.Server {
  const server = new rpc.Server(url, { allowHttp: url.startsWith('http:') });
  // The SDK's own `timeout` option is not applied to RPC calls; its HTTP client's default is.
  server.httpClient.defaults.timeout = timeoutMs;
  return server;
}
