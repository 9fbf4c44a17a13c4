import {
  type Address,
  type Chain,
  type Hex,
  type HttpTransport,
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  getAddress,
  http,
  parseAbi,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { compiledContract } from './compile.js';
import type { LocalChain } from './node.js';

/** The canonical Multicall3 address used by viem and @x402/evm. */
export const MULTICALL3_ADDRESS: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';
/** Real USDC on Base Sepolia (EIP-712 name "USDC", version "2"). */
export const BASE_SEPOLIA_USDC: Address = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';

/** A network-table entry (NETWORKS_JSON) for Base Sepolia's USDC, with the given RPC URL and label. */
export function baseSepoliaEntry(rpcUrl: string, label = 'Base Sepolia') {
  return {
    id: 'eip155:84532',
    family: 'evm',
    asset: BASE_SEPOLIA_USDC,
    decimals: 6,
    name: 'USDC',
    version: '2',
    rpcUrl,
    label,
  };
}
/** Real USDC on Base mainnet (EIP-712 name "USD Coin", version "2"). */
export const BASE_USDC: Address = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

/** Typed subset of the TestUSDC ABI used by these helpers and handy for tests. */
export const testUsdcAbi = parseAbi([
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function version() view returns (string)',
  'function decimals() view returns (uint8)',
  'function totalSupply() view returns (uint256)',
  'function balanceOf(address) view returns (uint256)',
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function mint(address to, uint256 value)',
  'function transfer(address to, uint256 value) returns (bool)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
]);

/** Options for {@link deployTestUsdc}. */
export interface DeployTestUsdcOptions {
  /** EIP-712 domain name, e.g. "USDC" (Base Sepolia) or "USD Coin" (Base mainnet). */
  name: string;
  /** EIP-712 domain version, e.g. "2". */
  version: string;
  symbol?: string;
  decimals?: number;
  /** Place the token's runtime code at this fixed address instead of the deployment address. */
  at?: Address;
}

/** A deployed TestUSDC token. */
export interface DeployedToken {
  address: Address;
}

/** Builds a viem `Chain` for the local node, with Multicall3 at its canonical address. */
export function localViemChain(chain: Pick<LocalChain, 'chainId' | 'rpcUrl'>, name = 'Tollbooth local'): Chain {
  return defineChain({
    id: chain.chainId,
    name,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [chain.rpcUrl] } },
    // Hardhat automines; a short block time makes viem poll receipts every 500 ms instead of 4 s.
    blockTime: 1_000,
    contracts: { multicall3: { address: MULTICALL3_ADDRESS } },
  });
}

/**
 * An HTTP transport for the local node with retries off: hardhat reports reverts as JSON-RPC
 * -32603, which viem otherwise retries with backoff, costing ~1 s per expected revert.
 */
export function localTransport(chain: Pick<LocalChain, 'rpcUrl'>): HttpTransport {
  return http(chain.rpcUrl, { retryCount: 0 });
}

/** Deploys TestUSDC from account 0; with `at`, copies its runtime code to that fixed address. */
export async function deployTestUsdc(chain: LocalChain, options: DeployTestUsdcOptions): Promise<DeployedToken> {
  const { name, version, symbol = 'USDC', decimals = 6, at } = options;
  const { abi, bytecode } = compiledContract('TestUSDC');
  const wallet = walletClient(chain);
  const args = [name, version, symbol, decimals];
  const hash = await wallet.deployContract({ abi, bytecode, args });
  const receipt = await publicClient(chain).waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success' || !receipt.contractAddress) {
    throw new Error(`TestUSDC deployment failed: ${hash}`);
  }
  if (!at) return { address: getAddress(receipt.contractAddress) };
  // Deployed code has the immutables (name, version, symbol, decimals) filled in; solc's has zeros.
  const code = await publicClient(chain).getCode({ address: receipt.contractAddress });
  if (!code || code === '0x') throw new Error('TestUSDC deployment left no code');
  await setCode(chain, at, code);
  return { address: getAddress(at) };
}

/** Mints `amount` base units of `token` to `to` (TestUSDC's mint is open to anyone). */
export async function mint(chain: LocalChain, token: Address, to: Address, amount: bigint): Promise<Hex> {
  const hash = await walletClient(chain).writeContract({
    address: token,
    abi: testUsdcAbi,
    functionName: 'mint',
    args: [to, amount],
  });
  const receipt = await publicClient(chain).waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`mint failed: ${hash}`);
  return hash;
}

/** Reads `who`'s balance of `token` in base units. */
export async function balanceOf(chain: LocalChain, token: Address, who: Address): Promise<bigint> {
  return publicClient(chain).readContract({
    address: token,
    abi: testUsdcAbi,
    functionName: 'balanceOf',
    args: [who],
  });
}

/** Places our Multicall3 at its canonical address unless code is already there; returns it. */
export async function deployMulticall3IfNeeded(chain: LocalChain): Promise<Address> {
  const existing = await publicClient(chain).getCode({ address: MULTICALL3_ADDRESS });
  if (!existing || existing === '0x') {
    // No constructor, no immutables: solc's runtime code is exactly what deploying would leave.
    await setCode(chain, MULTICALL3_ADDRESS, compiledContract('Multicall3').deployedBytecode);
  }
  return MULTICALL3_ADDRESS;
}

async function setCode(chain: LocalChain, address: Address, bytecode: Hex): Promise<void> {
  const testClient = createTestClient({
    mode: 'hardhat',
    chain: localViemChain(chain),
    transport: localTransport(chain),
  });
  await testClient.setCode({ address, bytecode });
}

function publicClient(chain: LocalChain) {
  return createPublicClient({
    chain: localViemChain(chain),
    transport: localTransport(chain),
    pollingInterval: 50,
  });
}

function walletClient(chain: LocalChain) {
  const deployer = chain.accounts[0];
  if (!deployer) throw new Error('local chain has no accounts');
  return createWalletClient({
    account: privateKeyToAccount(deployer.privateKey),
    chain: localViemChain(chain),
    transport: localTransport(chain),
    pollingInterval: 50,
  });
}
