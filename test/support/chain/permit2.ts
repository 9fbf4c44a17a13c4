import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { PERMIT2_ADDRESS, createPermit2ApprovalTx, x402UptoPermit2ProxyAddress } from '@x402/evm';
import {
  type Address,
  type Hex,
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeAbiParameters,
  keccak256,
  parseAbi,
  stringToHex,
} from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { compiledContract } from './compile.js';
import type { LocalChain } from './node.js';
import { localTransport, localViemChain } from './token.js';

/** Permit2's canonical address (the same on every chain). */
export const PERMIT2: Address = PERMIT2_ADDRESS;
/** The canonical address of the x402 `upto` Permit2 proxy, the only spender an upto authorization may name. */
export const UPTO_PROXY: Address = x402UptoPermit2ProxyAddress;

/** The npm package whose compiled artifacts carry Permit2's canonical runtime code, and the artifact inside it. */
export const PERMIT2_ARTIFACT = {
  pkg: '@uniswap/v4-periphery',
  path: 'foundry-out/DeployPermit2.sol/DeployPermit2.json',
} as const;

/** Read-only subset of Permit2 used by tests. */
export const permit2Abi = parseAbi([
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
  'function nonceBitmap(address owner, uint256 wordPos) view returns (uint256)',
]);

const PERMIT2_RUNTIME_START = '6040608081526004908136101561001557600080fd5b';
// solc's CBOR metadata tail of Permit2's build: `a1 64 "solc" 43 <version> 00 0a`.
const PERMIT2_RUNTIME_END = /a164736f6c6343[0-9a-f]{6}000a/;

let permit2Code: Hex | undefined;

/**
 * Permit2's canonical runtime code, taken from the compiled `DeployPermit2` helper that @uniswap/v4-periphery
 * publishes (it embeds the mainnet runtime to etch it at the canonical address). Its immutables cache chain id 1;
 * on any other chain Permit2 recomputes its EIP-712 domain from `block.chainid` and `address(this)`, so the code is
 * correct wherever it is placed at the canonical address.
 */
export function permit2RuntimeCode(): Hex {
  if (permit2Code) return permit2Code;
  const require = createRequire(import.meta.url);
  let file: string;
  try {
    file = require.resolve(`${PERMIT2_ARTIFACT.pkg}/${PERMIT2_ARTIFACT.path}`);
  } catch {
    throw new Error(
      `Permit2's runtime code comes from the npm package ${PERMIT2_ARTIFACT.pkg} (devDependency), which is not installed.`,
    );
  }
  const artifact = JSON.parse(readFileSync(file, 'utf8')) as { deployedBytecode: { object: string } };
  const helper = artifact.deployedBytecode.object.replace(/^0x/, '').toLowerCase();
  const start = helper.indexOf(PERMIT2_RUNTIME_START);
  const end = start < 0 ? null : PERMIT2_RUNTIME_END.exec(helper.slice(start));
  if (start < 0 || !end)
    throw new Error(`${PERMIT2_ARTIFACT.path} no longer embeds Permit2's runtime code in the expected form.`);
  permit2Code = `0x${helper.slice(start, start + end.index + end[0].length)}`;
  return permit2Code;
}

/** The EIP-712 domain separator Permit2 must report at its canonical address on a chain. */
export function expectedPermit2DomainSeparator(chainId: number): Hex {
  const typeHash = keccak256(stringToHex('EIP712Domain(string name,uint256 chainId,address verifyingContract)'));
  return keccak256(
    encodeAbiParameters(
      [{ type: 'bytes32' }, { type: 'bytes32' }, { type: 'uint256' }, { type: 'address' }],
      [typeHash, keccak256(stringToHex('Permit2')), BigInt(chainId), PERMIT2],
    ),
  );
}

async function setCode(chain: LocalChain, address: Address, bytecode: Hex): Promise<void> {
  const test = createTestClient({ mode: 'hardhat', chain: localViemChain(chain), transport: localTransport(chain) });
  await test.setCode({ address, bytecode });
}

/** Places the real Permit2 and the look-alike upto proxy at their canonical addresses. */
export async function deployPermit2AndUptoProxy(chain: LocalChain): Promise<void> {
  await setCode(chain, PERMIT2, permit2RuntimeCode());
  await setCode(chain, UPTO_PROXY, compiledContract('X402UptoProxy').deployedBytecode);
}

/** The payer's one-time `approve(Permit2, max)` on the token, built by the official @x402/evm helper. */
export async function approvePermit2(chain: LocalChain, token: Address, payer: PrivateKeyAccount): Promise<void> {
  const wallet = createWalletClient({ account: payer, chain: localViemChain(chain), transport: localTransport(chain) });
  const tx = createPermit2ApprovalTx(token);
  const hash = await wallet.sendTransaction({ to: tx.to, data: tx.data });
  const receipt = await publicClient(chain).waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`Permit2 approval failed: ${hash}`);
}

/** True when Permit2 has burnt `nonce` of `owner` (the chain's single-use record of an upto authorization). */
export async function permit2NonceUsed(chain: LocalChain, owner: Address, nonce: bigint): Promise<boolean> {
  const bitmap = await publicClient(chain).readContract({
    address: PERMIT2,
    abi: permit2Abi,
    functionName: 'nonceBitmap',
    args: [owner, nonce >> 8n],
  });
  return ((bitmap >> (nonce & 0xffn)) & 1n) === 1n;
}

function publicClient(chain: LocalChain) {
  return createPublicClient({ chain: localViemChain(chain), transport: localTransport(chain), pollingInterval: 50 });
}
