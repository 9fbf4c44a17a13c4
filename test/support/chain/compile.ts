import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Abi, Hex } from 'viem';

/** The contracts compiled from `test/support/contracts/`. */
export type ContractName =
  | 'TestUSDC'
  | 'Multicall3'
  | 'X402UptoProxy'
  | 'X402BatchSettlement'
  | 'X402Erc3009DepositCollector'
  | 'X402Permit2DepositCollector';

/** ABI plus creation and runtime bytecode of one compiled contract. */
export interface CompiledContract {
  abi: Abi;
  bytecode: Hex;
  /** Runtime code as emitted by solc; immutables are still zero placeholders here. */
  deployedBytecode: Hex;
}

interface SolcContract {
  abi: Abi;
  evm: { bytecode: { object: string }; deployedBytecode: { object: string } };
}

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts?: Record<string, Record<string, SolcContract>>;
}

interface Solc {
  version(): string;
  compile(input: string): string;
}

const CONTRACTS_DIR = fileURLToPath(new URL('../contracts/', import.meta.url));
const SOURCE_FILES: Record<ContractName, string> = {
  TestUSDC: 'TestUSDC.sol',
  Multicall3: 'Multicall3.sol',
  X402UptoProxy: 'X402UptoProxy.sol',
  X402BatchSettlement: 'X402BatchSettlement.sol',
  X402Erc3009DepositCollector: 'X402BatchSettlementCollectors.sol',
  X402Permit2DepositCollector: 'X402BatchSettlementCollectors.sol',
};
// Sources that only hold abstract bases imported by the contracts above.
const BASE_FILES = ['X402BatchSettlementEip712.sol'];
const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
};
// Bump when the cache file layout changes.
const CACHE_FORMAT = 1;

let memo: Record<ContractName, CompiledContract> | undefined;

/** Compiles the test contracts with solc-js, cached in memory and on disk by source hash. */
export function compileContracts(): Record<ContractName, CompiledContract> {
  if (memo) return memo;
  const sources: Record<string, { content: string }> = {};
  for (const file of [...Object.values(SOURCE_FILES), ...BASE_FILES]) {
    sources[file] = { content: readFileSync(join(CONTRACTS_DIR, file), 'utf8') };
  }
  const input = JSON.stringify({ language: 'Solidity', sources, settings: SETTINGS });
  const key = createHash('sha256').update(`${CACHE_FORMAT}\n${solcPackageVersion()}\n${input}`).digest('hex');
  const cacheFile = join(tmpdir(), `tollbooth-solc-${key.slice(0, 32)}.json`);
  memo = readCache(cacheFile) ?? compileAndCache(input, cacheFile);
  return memo;
}

/** Returns one compiled test contract by name. */
export function compiledContract(name: ContractName): CompiledContract {
  return compileContracts()[name];
}

function solcPackageVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('solc/package.json') as { version: string }).version;
}

function readCache(file: string): Record<ContractName, CompiledContract> | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const cached = JSON.parse(readFileSync(file, 'utf8')) as Record<ContractName, CompiledContract>;
    return (Object.keys(SOURCE_FILES) as ContractName[]).every((name) => cached[name]?.bytecode) ? cached : undefined;
  } catch {
    return undefined;
  }
}

function compileAndCache(input: string, cacheFile: string): Record<ContractName, CompiledContract> {
  // solc-js loads its ~8 MB emscripten build at require time, so only pay for it on a cache miss.
  const solc = createRequire(import.meta.url)('solc') as Solc;
  const output = JSON.parse(solc.compile(input)) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) {
    throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  }
  const result = {} as Record<ContractName, CompiledContract>;
  for (const [name, file] of Object.entries(SOURCE_FILES) as [ContractName, string][]) {
    const contract = output.contracts?.[file]?.[name];
    if (!contract) throw new Error(`solc produced no output for ${file}:${name}`);
    result[name] = {
      abi: contract.abi,
      bytecode: `0x${contract.evm.bytecode.object}`,
      deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
    };
  }
  // Write then rename so parallel test workers never read a half-written file.
  const temp = `${cacheFile}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, JSON.stringify(result));
    renameSync(temp, cacheFile);
  } catch {
    // The disk cache is only an optimisation.
  }
  return result;
}
