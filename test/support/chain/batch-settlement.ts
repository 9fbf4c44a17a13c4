import { BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS } from '@x402/evm';
import {
  type Address,
  type Hex,
  createPublicClient,
  createTestClient,
  createWalletClient,
  getAddress,
  parseAbi,
  parseEventLogs,
  publicActions,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { compiledContract } from './compile.js';
import type { LocalChain } from './node.js';
import { type BaseEnvironment, startBaseEnvironment } from './permit2-env.js';
import { PERMIT2, permit2RuntimeCode } from './permit2.js';
import { deployMulticall3IfNeeded, localTransport, localViemChain } from './token.js';

/** The x402 batch-settlement escrow's canonical address (where @x402/evm sends every call). */
export const BATCH_SETTLEMENT: Address = getAddress(BATCH_SETTLEMENT_ADDRESS);
/** The canonical ERC-3009 (`receiveWithAuthorization`) deposit collector. */
export const ERC3009_DEPOSIT_COLLECTOR: Address = getAddress(ERC3009_DEPOSIT_COLLECTOR_ADDRESS);
/** The canonical Permit2 deposit collector (not exported by @x402/evm's root; the look-alike pins it too). */
export const PERMIT2_DEPOSIT_COLLECTOR: Address = '0x4020425FAf3B746C082C2f942b4E5159887B0005';

/** The escrow's read-only views used by tests (the look-alike answers them as the official ABI declares). */
export const batchSettlementReadAbi = parseAbi([
  'function channels(bytes32 channelId) view returns (uint128 balance, uint128 totalClaimed)',
  'function pendingWithdrawals(bytes32 channelId) view returns (uint128 amount, uint40 initiatedAt)',
  'function receivers(address receiver, address token) view returns (uint128 totalClaimed, uint128 totalSettled)',
  'function refundNonce(bytes32 channelId) view returns (uint256)',
]);

/** The channel struct as the escrow takes it, for direct calls in tests. */
const CHANNEL_CONFIG =
  '(address payer, address payerAuthorizer, address receiver, address receiverAuthorizer, address token, uint40 withdrawDelay, bytes32 salt)';

/** The payer-side escape hatch (not used by @x402/evm, which never withdraws): start and finish a timed withdrawal. */
export const batchSettlementWithdrawAbi = parseAbi([
  `function initiateWithdraw(${CHANNEL_CONFIG} config, uint128 amount)`,
  `function finalizeWithdraw(${CHANNEL_CONFIG} config)`,
]);

/** A channel's on-chain state as the escrow reports it. */
export interface OnchainChannel {
  balance: bigint;
  totalClaimed: bigint;
  withdrawAmount: bigint;
  withdrawInitiatedAt: number;
  refundNonce: bigint;
}

/**
 * Places the look-alike batch-settlement escrow and its two deposit collectors at the canonical addresses, plus
 * the real Permit2 and Multicall3 when absent. None has a constructor or immutables, so solc's runtime code is
 * exactly what a deployment would leave; the escrow derives its EIP-712 domain from `block.chainid` and its address.
 */
export async function installBatchSettlement(chain: LocalChain): Promise<void> {
  const test = createTestClient({ mode: 'hardhat', chain: localViemChain(chain), transport: localTransport(chain) });
  const place = (address: Address, bytecode: Hex) => test.setCode({ address, bytecode });
  await place(BATCH_SETTLEMENT, compiledContract('X402BatchSettlement').deployedBytecode);
  await place(ERC3009_DEPOSIT_COLLECTOR, compiledContract('X402Erc3009DepositCollector').deployedBytecode);
  await place(PERMIT2_DEPOSIT_COLLECTOR, compiledContract('X402Permit2DepositCollector').deployedBytecode);
  const reader = publicClient(chain);
  const permit2 = await reader.getCode({ address: PERMIT2 });
  if (!permit2 || permit2 === '0x') await place(PERMIT2, permit2RuntimeCode());
  await deployMulticall3IfNeeded(chain);
}

/** Reads a channel's balance, claimed total, pending withdrawal and refund nonce from the escrow. */
export async function readOnchainChannel(chain: LocalChain, channelId: Hex): Promise<OnchainChannel> {
  const reader = publicClient(chain);
  const at = { address: BATCH_SETTLEMENT, abi: batchSettlementReadAbi, args: [channelId] } as const;
  const [[balance, totalClaimed], [withdrawAmount, withdrawInitiatedAt], refundNonce] = await Promise.all([
    reader.readContract({ ...at, functionName: 'channels' }),
    reader.readContract({ ...at, functionName: 'pendingWithdrawals' }),
    reader.readContract({ ...at, functionName: 'refundNonce' }),
  ]);
  return { balance, totalClaimed, withdrawAmount, withdrawInitiatedAt, refundNonce };
}

/** Reads what the escrow has claimed and settled for (receiver, token). */
export async function readReceiverTotals(
  chain: LocalChain,
  receiver: Address,
  token: Address,
): Promise<{ totalClaimed: bigint; totalSettled: bigint }> {
  const [totalClaimed, totalSettled] = await publicClient(chain).readContract({
    address: BATCH_SETTLEMENT,
    abi: batchSettlementReadAbi,
    functionName: 'receivers',
    args: [receiver, token],
  });
  return { totalClaimed, totalSettled };
}

const claimedEvent = parseAbi([
  'event Claimed(bytes32 indexed channelId, address indexed receiver, uint128 amount, uint128 totalClaimed)',
]);

/** What the successful transaction `hash` claimed for `receiver`, per its `Claimed` events (0 when it failed). */
export async function claimedByTransaction(chain: LocalChain, receiver: Address, hash: Hex): Promise<bigint> {
  const receipt = await publicClient(chain).getTransactionReceipt({ hash });
  if (receipt.status !== 'success') return 0n;
  return parseEventLogs({ abi: claimedEvent, eventName: 'Claimed', logs: receipt.logs })
    .filter((e) => e.args.receiver.toLowerCase() === receiver.toLowerCase())
    .reduce((sum, e) => sum + e.args.amount, 0n);
}

/** Moves the chain's clock forward by `seconds` and mines a block (for timed withdrawals). */
export async function advanceChainTime(chain: LocalChain, seconds: number): Promise<void> {
  const test = createTestClient({ mode: 'hardhat', chain: localViemChain(chain), transport: localTransport(chain) });
  await test.increaseTime({ seconds });
  await test.mine({ blocks: 1 });
}

/** A wallet client (with public actions) for `account` on the local chain, e.g. for a payer's direct calls. */
export function chainWallet(chain: LocalChain, account: PrivateKeyAccount) {
  return createWalletClient({
    account,
    chain: localViemChain(chain),
    transport: localTransport(chain),
    pollingInterval: 50,
  }).extend(publicActions);
}

/** A Base (8453) environment with the batch-settlement escrow installed, plus a receiver-authorizer key. */
export interface BatchSettlementEnvironment extends BaseEnvironment {
  /** Signs ClaimBatch / Refund authorizations (`extra.receiverAuthorizer`); holds no ETH, relays nothing. */
  receiverAuthorizer: PrivateKeyAccount;
}

/**
 * Starts {@link startBaseEnvironment} (TestUSDC at Base's USDC address, Permit2, Multicall3, funded payers) and
 * installs the batch-settlement escrow and collectors at their canonical addresses.
 */
export async function startBatchSettlementEnvironment(payerCount: number): Promise<BatchSettlementEnvironment> {
  const base = await startBaseEnvironment(payerCount, { permit2: { approved: 0 } });
  try {
    await installBatchSettlement(base.chain);
  } catch (err) {
    await base.stop();
    throw err;
  }
  return { ...base, receiverAuthorizer: privateKeyToAccount(generatePrivateKey()) };
}

function publicClient(chain: LocalChain) {
  return createPublicClient({ chain: localViemChain(chain), transport: localTransport(chain), pollingInterval: 50 });
}
