import { createPublicClient, http, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/shared/log.js';
import { createEvmFaucet } from '../../../src/providers/chain/evm-faucet.js';
import { startLocalChain, type LocalChain } from '../../support/chain/node.js';
import { BASE_SEPOLIA_USDC, balanceOf, deployTestUsdc, mint } from '../../support/chain/token.js';
import { toolFailure } from '../../support/upstreams/open-data.js';
import { startLookalikeServer, type Lookalike } from '../../support/upstreams/server.js';

let chain: LocalChain;
let wrongChain: Lookalike;
const signal = new AbortController().signal;

beforeAll(async () => {
  chain = await startLocalChain({ chainId: 84532, accountCount: 4 });
  await deployTestUsdc(chain, { name: 'USDC', version: '2', at: BASE_SEPOLIA_USDC });
  await mint(chain, BASE_SEPOLIA_USDC, chain.accounts[1]!.address, 100_000_000n);
  // An RPC that says it is Base mainnet (8453): a faucet pointed at it must send nothing.
  wrongChain = await startLookalikeServer((req) => {
    const { id, method } = req.body as { id: number; method: string };
    return method === 'eth_chainId'
      ? { json: { jsonrpc: '2.0', id, result: '0x2105' } }
      : { json: { jsonrpc: '2.0', id, error: { code: -32601, message: `unexpected ${method}` } } };
  });
}, 120_000);
afterAll(async () => {
  await wrongChain?.stop();
  await chain?.stop();
});

const fresh = (): Address => privateKeyToAccount(generatePrivateKey()).address;
const faucet = (key = chain.accounts[1]!.privateKey, rpcUrl = chain.rpcUrl) =>
  createEvmFaucet(
    { key, rpcUrl, usdc: BASE_SEPOLIA_USDC, timeoutMs: 5_000, retries: 0, confirmTimeoutMs: 20_000 },
    silentLogger,
  );
const ethOf = (who: Address) => createPublicClient({ transport: http(chain.rpcUrl) }).getBalance({ address: who });

describe('the self-hosted Base Sepolia faucet', () => {
  it('sends 1 USDC from the operator key and returns the mined transaction with its explorer link', async () => {
    const to = fresh();
    const drip = await faucet().drip({ network: 'base-sepolia', token: 'usdc', address: to }, signal);
    expect(drip.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(drip.explorer).toBe(`https://sepolia.basescan.org/tx/${drip.transactionHash}`);
    expect(await balanceOf(chain, BASE_SEPOLIA_USDC, to)).toBe(1_000_000n);
    const receipt = await createPublicClient({ transport: http(chain.rpcUrl) }).getTransactionReceipt({
      hash: drip.transactionHash as `0x${string}`,
    });
    expect(receipt.status).toBe('success');
    expect(receipt.from.toLowerCase()).toBe(chain.accounts[1]!.address.toLowerCase());
  });

  it('sends 0.0001 ETH as a plain value transfer', async () => {
    const to = fresh();
    await faucet().drip({ network: 'base-sepolia', token: 'eth', address: to }, signal);
    expect(await ethOf(to)).toBe(100_000_000_000_000n);
  });

  it('sends concurrent drips from one key with distinct nonces, and every one lands', async () => {
    const one = faucet();
    const recipients = Array.from({ length: 6 }, fresh);
    const drips = await Promise.all(
      recipients.map((address, i) =>
        one.drip({ network: 'base-sepolia', token: i % 2 ? 'eth' : 'usdc', address }, signal),
      ),
    );
    expect(new Set(drips.map((d) => d.transactionHash)).size).toBe(6);
    for (const [i, who] of recipients.entries()) {
      if (i % 2) expect(await ethOf(who)).toBe(100_000_000_000_000n);
      else expect(await balanceOf(chain, BASE_SEPOLIA_USDC, who)).toBe(1_000_000n);
    }
  });

  it('says the faucet is out of USDC when its key holds none, and sends nothing', async () => {
    const empty = chain.accounts[2]!;
    const err = await toolFailure(
      faucet(empty.privateKey).drip({ network: 'base-sepolia', token: 'usdc', address: fresh() }, signal),
    );
    expect(err.code).toBe('upstream_unavailable');
    expect(err.message).toMatch(/out of funds for a USDC drip/);
  });

  it('refuses to send when its RPC is not Base Sepolia (a mainnet URL given by mistake)', async () => {
    const err = await toolFailure(
      faucet(chain.accounts[1]!.privateKey, wrongChain.url).drip(
        { network: 'base-sepolia', token: 'eth', address: fresh() },
        signal,
      ),
    );
    expect(err.code).toBe('upstream_unavailable');
    expect(err.message).toMatch(/not Base Sepolia/);
    expect(wrongChain.requests).toBe(1); // eth_chainId only: nothing was signed or sent
  });
});
