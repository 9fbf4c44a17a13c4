import { Address, type Operation, type Transaction } from '@stellar/stellar-sdk';

/** What the harness insists on in every submitted transaction, beyond the chain's own rules. */
export interface SubmissionPolicy {
  /** The only account that may submit (and sponsor) settlements. */
  facilitator: string;
  payTo: string;
  asset: string;
  /** Largest accepted `signatureExpirationLedger - latest ledger`. */
  maxExpirationLedgers: number;
}

/** The harness rules: our facilitator submits only fee-sponsored transfers to our pay-to, bound in time, and never authorizes anything itself. */
export function policyViolation(tx: Transaction, p: SubmissionPolicy, latestLedger: number): string | undefined {
  if (tx.source !== p.facilitator) return `submitted by ${tx.source}, not by the facilitator account`;
  const op = tx.operations[0] as Operation.InvokeHostFunction | undefined;
  if (
    tx.operations.length !== 1 ||
    op?.type !== 'invokeHostFunction' ||
    op.func.switch().name !== 'hostFunctionTypeInvokeContract'
  )
    return 'not exactly one contract invocation';
  if (op.source !== undefined && op.source !== tx.source) return 'the operation has its own source account';
  const invoke = op.func.invokeContract();
  if (
    Address.fromScAddress(invoke.contractAddress()).toString() !== p.asset ||
    invoke.functionName().toString() !== 'transfer'
  )
    return 'not a transfer on the asset contract';
  const [from, to] = invoke
    .args()
    .slice(0, 2)
    .map((a) => Address.fromScVal(a).toString());
  if (from === p.facilitator) return 'the facilitator pays';
  if (to !== p.payTo) return `pays ${to}, not the pay-to address`;
  for (const entry of op.auth ?? []) {
    if (entry.credentials().switch().name !== 'sorobanCredentialsAddress')
      return 'an authorization entry uses the source account (the fee sponsor) as credentials';
    const creds = entry.credentials().address();
    if (Address.fromScAddress(creds.address()).toString() === p.facilitator)
      return 'the facilitator appears in an authorization entry';
    if (creds.signatureExpirationLedger() > latestLedger + p.maxExpirationLedgers)
      return `authorization expires at ledger ${creds.signatureExpirationLedger()}, beyond the bound`;
  }
  return undefined;
}
