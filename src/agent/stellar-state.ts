/**
 * Whether a Stellar `exact` payment the agent sent was used, asked of the network's Soroban RPC: the payer's
 * authorization nonce is single-use, and the network keeps the consumed nonce until the entry's expiration ledger;
 * after that, the asset's transfer events of the window it could have landed in say whether it ever did.
 */
import { Address, Networks, rpc, TransactionBuilder, xdr, type Transaction } from '@stellar/stellar-sdk';
import type { PaymentPayload } from '@x402/core/types';
import { STELLAR_LEDGER_SECONDS } from './stellar-payer.js';

/** What the network says about one sent Stellar payment (the agent's `AuthorizationState`). */
export type StellarPaymentState = { type: 'used' } | { type: 'unused' } | { type: 'unknown'; why: string };

/** The payer's signed entry of a payment: who, which nonce, until which ledger, on which asset. */
interface SentAuthorization {
  payer: string;
  nonce: xdr.Int64;
  expirationLedger: number;
  asset: string;
  passphrase: string;
}

/** Transfer events asked for at once; a payer with more in the window is answered `unknown`. */
const EVENTS_PAGE = 100;

const PASSPHRASES: Readonly<Record<string, string>> = {
  'stellar:pubnet': Networks.PUBLIC,
  'stellar:testnet': Networks.TESTNET,
};

/** The payer's entry of the payment's transaction, or undefined when the payload carries none. */
function sentAuthorization(payload: PaymentPayload, network: string): SentAuthorization | undefined {
  const envelope = (payload.payload as { transaction?: unknown } | undefined)?.transaction;
  const passphrase = PASSPHRASES[network];
  if (typeof envelope !== 'string' || !passphrase) return undefined;
  const tx = TransactionBuilder.fromXDR(envelope, passphrase) as Transaction;
  const op = tx.operations[0];
  if (op?.type !== 'invokeHostFunction' || op.func.switch().name !== 'hostFunctionTypeInvokeContract') return undefined;
  const entry = (op.auth ?? []).find((e) => e.credentials().switch().name === 'sorobanCredentialsAddress');
  if (!entry) return undefined;
  const creds = entry.credentials().address();
  return {
    payer: Address.fromScAddress(creds.address()).toString(),
    nonce: creds.nonce(),
    expirationLedger: creds.signatureExpirationLedger(),
    asset: Address.fromScAddress(op.func.invokeContract().contractAddress()).toString(),
    passphrase,
  };
}

/** The ledger key of the payer's nonce entry (temporary contract data under the payer's address). */
function nonceKey(auth: SentAuthorization): xdr.LedgerKey {
  return xdr.LedgerKey.contractData(
    new xdr.LedgerKeyContractData({
      contract: Address.fromString(auth.payer).toScAddress(),
      key: xdr.ScVal.scvLedgerKeyNonce(new xdr.ScNonceKey({ nonce: auth.nonce })),
      durability: xdr.ContractDataDurability.temporary(),
    }),
  );
}

/** True when a transaction carries an address entry of this payer with this nonce. */
function carries(envelope: xdr.TransactionEnvelope, auth: SentAuthorization): boolean {
  const sent = TransactionBuilder.fromXDR(envelope, auth.passphrase);
  const inner = 'innerTransaction' in sent ? sent.innerTransaction : sent;
  return inner.operations.some(
    (o) =>
      o.type === 'invokeHostFunction' &&
      (o.auth ?? []).some((e) => {
        if (e.credentials().switch().name !== 'sorobanCredentialsAddress') return false;
        const creds = e.credentials().address();
        return (
          Address.fromScAddress(creds.address()).toString() === auth.payer &&
          creds.nonce().toString() === auth.nonce.toString()
        );
      }),
  );
}

/**
 * Whether a transfer from the payer in the ledgers the payment could have landed in carried this very nonce;
 * undefined when there were more transfers than one page shows.
 */
async function transferredInWindow(
  server: rpc.Server,
  auth: SentAuthorization,
  startLedger: number,
): Promise<boolean | undefined> {
  const topics = [xdr.ScVal.scvSymbol('transfer'), Address.fromString(auth.payer).toScVal()].map((t) =>
    t.toXDR('base64'),
  );
  const found = await server.getEvents({
    startLedger,
    endLedger: auth.expirationLedger + 1,
    filters: [
      {
        type: 'contract',
        contractIds: [auth.asset],
        topics: [
          [...topics, '*'],
          [...topics, '*', '*'],
        ],
      },
    ],
    limit: EVENTS_PAGE,
  });
  if (found.events.length >= EVENTS_PAGE) return undefined;
  const hashes = new Set(found.events.filter((e) => e.inSuccessfulContractCall).map((e) => e.txHash));
  for (const hash of hashes) {
    const tx = await server.getTransaction(hash);
    if (tx.status === rpc.Api.GetTransactionStatus.SUCCESS && carries(tx.envelopeXdr, auth)) return true;
  }
  return false;
}

/**
 * Asks the RPC about the payment: its nonce entry present → used; not present while the entry has not expired →
 * unknown (it could still land); expired → used or unused by the asset's transfer events of its window, unknown
 * when the RPC's history no longer covers that window. Throws on RPC failures (the caller reports them as unknown).
 */
export async function stellarPaymentState(
  payload: PaymentPayload,
  network: string,
  rpcUrl: string,
  timeoutMs: number,
): Promise<StellarPaymentState> {
  const auth = sentAuthorization(payload, network);
  if (!auth) return { type: 'unknown', why: 'the payment carries no Stellar authorization entry to look up' };
  const server = new rpc.Server(rpcUrl, { allowHttp: rpcUrl.startsWith('http:') });
  server.httpClient.defaults.timeout = timeoutMs;
  const entries = await server.getLedgerEntries(nonceKey(auth));
  if (entries.entries.length > 0) return { type: 'used' };
  const health = await server.getHealth();
  if (health.latestLedger <= auth.expirationLedger)
    return { type: 'unknown', why: `the payment could still land until ledger ${auth.expirationLedger}` };
  const maxTimeoutSeconds = payload.accepted?.maxTimeoutSeconds;
  if (typeof maxTimeoutSeconds !== 'number')
    return { type: 'unknown', why: 'the payment does not say how long it was valid (accepted.maxTimeoutSeconds)' };
  // The payer signed at this ledger (stellar-payer.ts); the payment can only have landed after it.
  const windowStart = auth.expirationLedger - Math.ceil(maxTimeoutSeconds / STELLAR_LEDGER_SECONDS);
  if (windowStart < health.oldestLedger)
    return { type: 'unknown', why: 'the RPC no longer keeps the ledgers the payment could have landed in' };
  const transferred = await transferredInWindow(server, auth, windowStart);
  if (transferred === undefined)
    return { type: 'unknown', why: 'the payer made too many transfers in the window to tell' };
  return transferred ? { type: 'used' } : { type: 'unused' };
}
