/** Transaction errors as a real Solana RPC node writes them in JSON, from litesvm's failed transactions. */
import type { FailedTransactionMetadata } from 'litesvm';

const TRANSACTION_ERRORS =
  'AccountInUse AccountLoadedTwice AccountNotFound ProgramAccountNotFound InsufficientFundsForFee InvalidAccountForFee AlreadyProcessed BlockhashNotFound CallChainTooDeep MissingSignatureForFee InvalidAccountIndex SignatureFailure InvalidProgramForExecution SanitizeFailure ClusterMaintenance AccountBorrowOutstanding WouldExceedMaxBlockCostLimit UnsupportedVersion InvalidWritableAccount WouldExceedMaxAccountCostLimit WouldExceedAccountDataBlockLimit TooManyAccountLocks AddressLookupTableNotFound InvalidAddressLookupTableOwner InvalidAddressLookupTableData InvalidAddressLookupTableIndex InvalidRentPayingAccount WouldExceedMaxVoteCostLimit WouldExceedAccountDataTotalLimit MaxLoadedAccountsDataSizeExceeded ResanitizationNeeded InvalidLoadedAccountsDataSizeLimit UnbalancedTransaction ProgramCacheHitMaxLimit CommitCancelled'.split(
    ' ',
  );
const INSTRUCTION_ERRORS =
  'GenericError InvalidArgument InvalidInstructionData InvalidAccountData AccountDataTooSmall InsufficientFunds IncorrectProgramId MissingRequiredSignature AccountAlreadyInitialized UninitializedAccount UnbalancedInstruction ModifiedProgramId ExternalAccountLamportSpend ExternalAccountDataModified ReadonlyLamportChange ReadonlyDataModified DuplicateAccountIndex ExecutableModified RentEpochModified NotEnoughAccountKeys AccountDataSizeChanged AccountNotExecutable AccountBorrowFailed AccountBorrowOutstanding DuplicateAccountOutOfSync InvalidError ExecutableDataModified ExecutableLamportChange ExecutableAccountNotRentExempt UnsupportedProgramId CallDepth MissingAccount ReentrancyNotAllowed MaxSeedLengthExceeded InvalidSeeds InvalidRealloc ComputationalBudgetExceeded PrivilegeEscalation ProgramEnvironmentSetupFailure ProgramFailedToComplete ProgramFailedToCompile Immutable IncorrectAuthority AccountNotRentExempt InvalidAccountOwner ArithmeticOverflow UnsupportedSysvar IllegalOwner MaxAccountsDataAllocationsExceeded MaxAccountsExceeded MaxInstructionTraceLengthExceeded BuiltinProgramsMustConsumeComputeUnits BorshIoError'.split(
    ' ',
  );

/** Transaction errors after which nothing lands on a real cluster (no fee is taken, no status is kept). */
export const NEVER_LANDS = new Set([
  'AccountNotFound',
  'InsufficientFundsForFee',
  'InvalidAccountForFee',
  'AlreadyProcessed',
  'BlockhashNotFound',
  'MissingSignatureForFee',
  'SignatureFailure',
  'SanitizeFailure',
  'UnsupportedVersion',
]);

/** The JSON a real RPC node uses for a transaction error (`"BlockhashNotFound"`, `{"InstructionError":[2,{"Custom":1}]}`, …). */
export function errorJson(failed: FailedTransactionMetadata): unknown {
  const err = failed.err() as unknown;
  if (typeof err === 'number') return TRANSACTION_ERRORS[err] ?? `TransactionError${err}`;
  const e = err as { index?: number; accountIndex?: number; err?: () => unknown; constructor: { name: string } };
  if (typeof e.err === 'function') {
    const inner = e.err() as unknown;
    const detail =
      typeof inner === 'number'
        ? (INSTRUCTION_ERRORS[inner] ?? `InstructionError${inner}`)
        : 'code' in (inner as object)
          ? { Custom: (inner as { code: number }).code }
          : { BorshIoError: (inner as { msg: string }).msg };
    return { InstructionError: [e.index, detail] };
  }
  if (e.constructor.name.includes('DuplicateInstruction')) return { DuplicateInstruction: e.index };
  if (e.constructor.name.includes('InsufficientFundsForRent'))
    return { InsufficientFundsForRent: { account_index: e.accountIndex } };
  return { ProgramExecutionTemporarilyRestricted: { account_index: e.accountIndex } };
}
