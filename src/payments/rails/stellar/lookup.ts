import { Address, rpc, xdr } from '@stellar/stellar-sdk';
import type { PaymentRequirements } from '@x402/core/types';
import type { LookupResult } from '../rail.js';
import type { PayerAuthorization } from './checks.js';
import { maxExpirationLedger } from './network.js';

/** True when a transaction envelope carries an address authorization with this payer and nonce. */
function carries(envelope: xdr.TransactionEnvelope, auth: Pick<PayerAuthorization, 'address' | 'nonce'>): boolean {
  const tx =
    envelope.switch().name === 'envelopeTypeTxFeeBump'
      ? envelope.feeBump().tx().innerTx().v1().tx()
      : envelope.v1().tx();
  return tx.operations().some((op) => {
    if (op.body().switch().name !== 'invokeHostFunction') return false;
    return op
      .body()
      .invokeHostFunctionOp()
      .auth()
      .some((entry) => {
        if (entry.credentials().switch().name !== 'sorobanCredentialsAddress') return false;
        const creds = entry.credentials().address();
        return (
          Address.fromScAddress(creds.address()).toString() === auth.address && creds.nonce().toString() === auth.nonce
        );
      });
  });
}

/**
 * What the chain says about an authorization: the successful transaction that executed it (by the hash we know,
 * else by the asset's `transfer` events from the payer to the pay-to in the ledgers where it could have landed,
 * each checked for this very nonce), `pending` while it could still land or history no longer covers it, and
 * `failed` once it has expired and the whole window it could have landed in was searched in vain.
 */
export async function lookupAuthorization(
  server: rpc.Server,
  auth: PayerAuthorization,
  req: PaymentRequirements,
  knownHash: string,
): Promise<LookupResult> {
  if (knownHash) {
    const tx = await server.getTransaction(knownHash);
    if (tx.status === rpc.Api.GetTransactionStatus.SUCCESS) return { type: 'settled', transaction: knownHash };
  }
  const health = await server.getHealth();
  const windowStart = auth.expirationLedger - maxExpirationLedger(0, req.maxTimeoutSeconds);
  const startLedger = Math.max(windowStart, health.oldestLedger);
  const lastLedger = Math.min(health.latestLedger, auth.expirationLedger);
  if (startLedger <= lastLedger) {
    const topics = [
      xdr.ScVal.scvSymbol('transfer'),
      Address.fromString(auth.address).toScVal(),
      Address.fromString(req.payTo).toScVal(),
    ].map((t) => t.toXDR('base64'));
    const found = await server.getEvents({
      startLedger,
      endLedger: lastLedger + 1,
      filters: [{ type: 'contract', contractIds: [req.asset], topics: [topics, [...topics, '*']] }],
      limit: 100,
    });
    const hashes = [...new Set(found.events.filter((e) => e.inSuccessfulContractCall).map((e) => e.txHash))];
    for (const hash of hashes) {
      const tx = await server.getTransaction(hash);
      if (tx.status === rpc.Api.GetTransactionStatus.SUCCESS && carries(tx.envelopeXdr, auth))
        return { type: 'settled', transaction: hash };
    }
  }
  if (health.latestLedger <= auth.expirationLedger) return { type: 'pending' };
  return windowStart >= health.oldestLedger
    ? { type: 'failed', reason: 'authorization_expired_unused' }
    : { type: 'pending' };
}
