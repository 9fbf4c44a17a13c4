/**
 * The payer's Soroban authorization entry of a Stellar `exact` payment: its shape, its expiration and its ed25519
 * signatures, checked offline before anything reaches the network.
 */
import { Address, hash, Keypair, StrKey, xdr } from '@stellar/stellar-sdk';
import type { PaymentRequirements } from '@x402/core/types';
import {
  payerAuthorization,
  refusal,
  type PayerAuthorization,
  type StellarFailure,
  type StellarTransfer,
} from './checks.js';
import { maxExpirationLedger, MIN_REMAINING_LEDGERS } from './network.js';

type Refused = { ok: false } & StellarFailure;

function sameInvocation(a: xdr.SorobanAuthorizedInvocation, invoke: xdr.InvokeContractArgs): boolean {
  const fn = a.function();
  if (fn.switch().name !== 'sorobanAuthorizedFunctionTypeContractFn') return false;
  return fn.contractFn().toXDR('base64') === invoke.toXDR('base64');
}

/** The ed25519 signatures of an account credential: `Vec<{ public_key: BytesN<32>, signature: BytesN<64> }>`. */
function accountSignatures(signature: xdr.ScVal): { publicKey: Buffer; signature: Buffer }[] | undefined {
  if (signature.switch().name !== 'scvVec') return undefined;
  const out: { publicKey: Buffer; signature: Buffer }[] = [];
  for (const item of signature.vec() ?? []) {
    if (item.switch().name !== 'scvMap') return undefined;
    const fields = new Map(
      (item.map() ?? []).map((e) => [e.key().switch().name === 'scvSymbol' ? e.key().sym().toString() : '', e.val()]),
    );
    const pk = fields.get('public_key');
    const sig = fields.get('signature');
    if (pk?.switch().name !== 'scvBytes' || sig?.switch().name !== 'scvBytes') return undefined;
    out.push({ publicKey: pk.bytes(), signature: sig.bytes() });
  }
  return out.length > 0 ? out : undefined;
}

/** SHA-256 of the authorization preimage a Soroban address credential signs (network id, nonce, expiration, invocation). */
export function authorizationPayload(entry: xdr.SorobanAuthorizationEntry, passphrase: string): Buffer {
  const creds = entry.credentials().address();
  const preimage = xdr.HashIdPreimage.envelopeTypeSorobanAuthorization(
    new xdr.HashIdPreimageSorobanAuthorization({
      networkId: hash(Buffer.from(passphrase)),
      nonce: creds.nonce(),
      signatureExpirationLedger: creds.signatureExpirationLedger(),
      invocation: entry.rootInvocation(),
    }),
  );
  return hash(preimage.toXDR());
}

/** Checks that every entry has address credentials and none names the facilitator. */
function checkAuthEntries(
  entries: readonly xdr.SorobanAuthorizationEntry[],
  facilitators: ReadonlySet<string>,
): Refused | undefined {
  if (entries.length === 0)
    return refusal(
      'invalid_exact_stellar_payload_no_auth_entries',
      'The transaction carries no Soroban authorization entry; sign the payer’s entry for the transfer.',
    );
  for (const entry of entries) {
    if (entry.credentials().switch().name !== 'sorobanCredentialsAddress') {
      return refusal(
        'invalid_exact_stellar_payload_unsupported_credential_type',
        'Only address credentials are accepted: the payer authorizes the transfer with its own signed entry, never through the transaction source.',
      );
    }
    if (facilitators.has(Address.fromScAddress(entry.credentials().address().address()).toString())) {
      return refusal(
        'invalid_exact_stellar_payload_facilitator_in_auth',
        'An authorization entry names the facilitator account; it only sponsors fees and authorizes nothing.',
      );
    }
  }
  return undefined;
}

/** Checks that the entry expires neither before the minimum remaining validity nor beyond the payment's bound. */
function checkAuthExpiration(
  auth: PayerAuthorization,
  req: PaymentRequirements,
  currentLedger: number,
): Refused | undefined {
  if (auth.expirationLedger < currentLedger + MIN_REMAINING_LEDGERS) {
    return refusal(
      'invalid_exact_stellar_signature_expired',
      `The authorization expires at ledger ${auth.expirationLedger}; the network is at ${currentLedger}. Sign a new one.`,
    );
  }
  const bound = maxExpirationLedger(currentLedger, req.maxTimeoutSeconds);
  if (auth.expirationLedger > bound) {
    return refusal(
      'invalid_exact_stellar_signature_expiration_too_far',
      `The authorization expires at ledger ${auth.expirationLedger}; at most ${bound} is accepted (maxTimeoutSeconds ${req.maxTimeoutSeconds}).`,
    );
  }
  return undefined;
}

/** Checks that the entry is signed and, for a G… account, that its ed25519 signatures verify on this network. */
function checkPayerSignature(auth: PayerAuthorization, passphrase: string): Refused | undefined {
  const signature = auth.entry.credentials().address().signature();
  if (signature.switch().name === 'scvVoid')
    return refusal(
      'invalid_exact_stellar_payload_missing_payer_signature',
      'The payer’s authorization entry is not signed.',
    );
  if (StrKey.isValidEd25519PublicKey(auth.address)) {
    const signatures = accountSignatures(signature);
    const payload = authorizationPayload(auth.entry, passphrase);
    const valid = signatures?.every(
      (s) =>
        s.publicKey.length === 32 &&
        Keypair.fromPublicKey(StrKey.encodeEd25519PublicKey(s.publicKey)).verify(payload, s.signature),
    );
    if (!valid)
      return refusal(
        'invalid_exact_stellar_payload_bad_payer_signature',
        'The payer’s signature does not verify over this authorization entry on this network.',
      );
  }
  return undefined;
}

/**
 * Checks the authorization entries: address credentials only, the facilitator in none, exactly one entry, for
 * `from`, authorizing exactly this call with no sub-invocations, expiring neither too soon nor beyond the bound,
 * and (for a G… account) carrying ed25519 signatures that verify over the entry on this network. Whether the
 * signing keys carry enough weight on the account is the chain's to say (simulation, then execution).
 */
export function checkAuthorization(
  t: StellarTransfer,
  req: PaymentRequirements,
  facilitators: ReadonlySet<string>,
  currentLedger: number,
  passphrase: string,
): ({ ok: true } & PayerAuthorization) | Refused {
  const entries = t.op.auth ?? [];
  const badEntry = checkAuthEntries(entries, facilitators);
  if (badEntry) return badEntry;
  const auth = payerAuthorization(t);
  if (!auth || entries.length !== 1)
    return refusal(
      'invalid_exact_stellar_payload_auth_mismatch',
      'The transaction must carry exactly one authorization entry, with address credentials of `from`.',
    );
  if (!sameInvocation(auth.entry.rootInvocation(), t.invoke)) {
    return refusal(
      'invalid_exact_stellar_payload_auth_mismatch',
      'The authorization entry authorizes a different call than transfer(from, payTo, amount) on the asset.',
    );
  }
  if (auth.entry.rootInvocation().subInvocations().length > 0) {
    return refusal(
      'invalid_exact_stellar_payload_has_subinvocations',
      'The authorization entry may not authorize sub-invocations.',
    );
  }
  const refused = checkAuthExpiration(auth, req, currentLedger) ?? checkPayerSignature(auth, passphrase);
  if (refused) return refused;
  return { ok: true, ...auth };
}
