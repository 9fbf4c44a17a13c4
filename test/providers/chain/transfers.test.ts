import { createPublicClient, createTestClient, createWalletClient, formatUnits, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEvmReader } from '../../../src/providers/chain/evm-rpc.js';
import { createTransferIndexer } from '../../../src/providers/chain/indexer.js';
import {
  cutToLimit,
  listTransfers,
  type FoundTransfer,
  type TransferRow,
} from '../../../src/providers/chain/transfers.js';
import { Upstream } from '../../../src/providers/upstream.js';
import { silentLogger } from '../../../src/shared/log.js';
import { startLocalChain, type LocalChain } from '../../support/chain/node.js';
import { deployTestUsdc, localTransport, localViemChain, mint, testUsdcAbi } from '../../support/chain/token.js';
import { startEvmRpcProxy, rpcMethod, type EvmRpcProxy } from '../../support/upstreams/evm-rpc.js';
import { startIndexerLookalike, type IndexerLookalike } from '../../support/upstreams/indexer.js';
import { toolFailure } from '../../support/upstreams/open-data.js';

let chain: LocalChain;
let proxy: EvmRpcProxy;
let indexer: IndexerLookalike;
let usdc: Address;
let dai: Address;
let alice: Address;
let bob: Address;
let carol: Address;
/** Every transfer the test made (or minted), as the chain recorded it. */
const made: Array<{ hash: Hex; block: number; from: Address; to: Address; token: Address; value: bigint }> = [];

const ZERO = '0x0000000000000000000000000000000000000000';

async function send(from: number, token: Address, to: Address, value: bigint, wait = true): Promise<Hex> {
  const account = privateKeyToAccount(chain.accounts[from]!.privateKey);
  const wallet = createWalletClient({ account, chain: localViemChain(chain), transport: localTransport(chain) });
  const hash = await wallet.writeContract({
    address: token,
    abi: testUsdcAbi,
    functionName: 'transfer',
    args: [to, value],
    ...(wait ? {} : { gas: 100_000n }),
  });
  if (wait) await record(hash, account.address, token, to, value);
  return hash;
}

async function record(hash: Hex, from: Address, token: Address, to: Address, value: bigint) {
  const receipt = await createPublicClient({ transport: localTransport(chain) }).waitForTransactionReceipt({
    hash,
    pollingInterval: 20,
  });
  made.push({ hash, block: Number(receipt.blockNumber), from, to, token, value });
}

const testClient = () =>
  createTestClient({ mode: 'hardhat', chain: localViemChain(chain), transport: localTransport(chain) });

beforeAll(async () => {
  chain = await startLocalChain({ chainId: 8453, accountCount: 4 });
  [alice, bob, carol] = chain.accounts.slice(1, 4).map((a) => a.address) as [Address, Address, Address];
  usdc = (await deployTestUsdc(chain, { name: 'USD Coin', version: '2' })).address;
  dai = (await deployTestUsdc(chain, { name: 'Test Dai', version: '1', symbol: 'TDAI', decimals: 18 })).address;
  for (const [token, to, value] of [
    [usdc, alice, 50_000_000n],
    [usdc, bob, 50_000_000n],
    [dai, alice, 10n ** 20n],
  ] as const) {
    await record(await mint(chain, token, to, value), ZERO, token, to, value);
  }
  await send(1, usdc, bob, 1_500_000n);
  await testClient().mine({ blocks: 30 });
  await send(2, usdc, alice, 250_000n);
  await testClient().mine({ blocks: 40 });
  await send(1, usdc, alice, 1_000_000n);
  await send(1, dai, carol, 2n * 10n ** 18n);
  await testClient().mine({ blocks: 25 });
  await send(3, dai, bob, 10n ** 18n); // not alice's
  // Two of alice's transfers in one block.
  await testClient().setAutomine(false);
  const one = await send(1, usdc, bob, 100_000n, false);
  const two = await send(2, usdc, alice, 200_000n, false);
  await testClient().mine({ blocks: 1 });
  await testClient().setAutomine(true);
  await record(one, alice, usdc, bob, 100_000n);
  await record(two, bob, usdc, alice, 200_000n);
  await testClient().mine({ blocks: 12 });
  proxy = await startEvmRpcProxy(chain.rpcUrl);
  indexer = await startIndexerLookalike(chain.rpcUrl, 'indexer-test-key');
}, 120_000);
afterAll(async () => {
  await indexer?.stop();
  await proxy?.stop();
  await chain?.stop();
});

const reader = (url = proxy.url) => createEvmReader(url, 'Base JSON-RPC', { timeoutMs: 5_000, retries: 0 });
const scan = { chunkBlocks: 10, maxBlocks: 100_000 };

/** What the listing must say for `who`, built from the transfers the test made, newest first. */
async function expected(who: Address, token?: Address): Promise<TransferRow[]> {
  const client = createPublicClient({ transport: localTransport(chain) });
  const mine = made.filter((t) => (t.from === who || t.to === who) && (!token || t.token === token));
  const rows = await Promise.all(
    mine.map(async (t) => {
      const block = await client.getBlock({ blockNumber: BigInt(t.block) });
      const decimals = t.token === dai ? 18 : 6;
      return {
        hash: t.hash,
        blockNumber: t.block,
        timestamp: new Date(Number(block.timestamp) * 1000).toISOString(),
        from: t.from,
        to: t.to,
        token: t.token,
        symbol: t.token === dai ? 'TDAI' : 'USDC',
        decimals,
        value: t.value.toString(),
        formatted: formatUnits(t.value, decimals),
        direction: t.from === who && t.to === who ? 'self' : t.from === who ? 'out' : 'in',
      } satisfies TransferRow;
    }),
  );
  return rows.sort((a, b) => b.blockNumber - a.blockNumber);
}

const sameSet = (rows: TransferRow[]) =>
  [...rows].sort((a, b) => b.blockNumber - a.blockNumber || a.hash.localeCompare(b.hash));

describe('listing ERC-20 transfers over JSON-RPC', () => {
  it('lists every transfer in and out of a wallet, newest first, with exact and formatted amounts, scanning chunk by chunk', async () => {
    const before = proxy.logRanges.length;
    const page = await listTransfers({ reader: reader(), scan }, { address: alice, limit: 100 });
    expect(sameSet(page.transfers)).toEqual(sameSet(await expected(alice)));
    expect(page.transfers.map((t) => t.blockNumber)).toEqual(
      [...page.transfers.map((t) => t.blockNumber)].sort((a, b) => b - a),
    );
    expect(page.transfers.map((t) => t.direction)).toEqual(expect.arrayContaining(['in', 'out', 'self']));
    expect(page.fromBlock).toBe(0);
    const ranges = proxy.logRanges.slice(before);
    expect(ranges.length).toBeGreaterThanOrEqual(2 * Math.ceil(page.toBlock / scan.chunkBlocks));
    expect(ranges.every(([from, to]) => to - from + 1 <= scan.chunkBlocks)).toBe(true);
  });

  it('filters by token contract', async () => {
    const page = await listTransfers({ reader: reader(), scan }, { address: alice, token: dai, limit: 100 });
    expect(sameSet(page.transfers)).toEqual(sameSet(await expected(alice, dai)));
    expect(page.transfers.every((t) => t.symbol === 'TDAI' && t.decimals === 18)).toBe(true);
  });

  it('stops at `limit` on a block boundary, so paging back with toBlock = fromBlock - 1 finds the rest exactly once', async () => {
    const all = await expected(alice);
    const seen: TransferRow[] = [];
    let toBlock: number | undefined;
    for (let pages = 0; pages < 20; pages++) {
      const page = await listTransfers(
        { reader: reader(), scan },
        { address: alice, limit: 2, ...(toBlock === undefined ? {} : { toBlock }) },
      );
      expect(page.transfers.length).toBeLessThanOrEqual(2);
      // Everything in [fromBlock, toBlock] is in this page.
      expect(sameSet(page.transfers)).toEqual(
        sameSet(all.filter((t) => t.blockNumber >= page.fromBlock && t.blockNumber <= page.toBlock)),
      );
      seen.push(...page.transfers);
      if (page.fromBlock === 0) break;
      toBlock = page.fromBlock - 1;
    }
    expect(sameSet(seen)).toEqual(sameSet(all));
  });

  it('halves its chunks when the RPC answers "block range too large", and still finds everything', async () => {
    const strict = await startEvmRpcProxy(chain.rpcUrl, { maxLogBlocks: 7 });
    try {
      const page = await listTransfers(
        { reader: reader(strict.url), scan: { chunkBlocks: 50, maxBlocks: 100_000 } },
        { address: alice, limit: 100 },
      );
      expect(sameSet(page.transfers)).toEqual(sameSet(await expected(alice)));
      expect(strict.refusedRanges).toBeGreaterThan(0);
      expect(strict.logRanges.every(([from, to]) => to - from + 1 <= 7)).toBe(true);
    } finally {
      await strict.stop();
    }
  });

  it('scans at most maxBlocks blocks per call and says where it stopped', async () => {
    const latest = Number(await createPublicClient({ transport: localTransport(chain) }).getBlockNumber());
    const page = await listTransfers(
      { reader: reader(), scan: { chunkBlocks: 10, maxBlocks: 30 } },
      { address: alice, limit: 100 },
    );
    expect(page.toBlock).toBe(latest);
    expect(page.fromBlock).toBe(latest - 29);
    expect(sameSet(page.transfers)).toEqual(
      sameSet((await expected(alice)).filter((t) => t.blockNumber >= latest - 29)),
    );
  });

  it('refuses a fromBlock after the latest block as invalid input', async () => {
    const err = await toolFailure(
      listTransfers({ reader: reader(), scan }, { address: alice, fromBlock: 10_000_000, limit: 10 }),
    );
    expect(err.code).toBe('invalid_input');
    expect(err.field).toBe('fromBlock');
  });

  it('fails with an upstream error (not an empty list) when the RPC refuses a log query for another reason', async () => {
    proxy.failNext('error200', 1, rpcMethod('eth_getLogs'));
    const err = await toolFailure(listTransfers({ reader: reader(), scan }, { address: alice, limit: 10 }));
    expect(err.code).toBe('upstream_unavailable');
    expect(err.message).toMatch(/Try again later\.$/);
  });
});

describe('listing ERC-20 transfers from the indexer', () => {
  const fromIndexer = (key = 'indexer-test-key') =>
    createTransferIndexer(
      new Upstream(
        {
          name: 'indexer',
          label: 'Alchemy transfers API',
          baseUrl: indexer.url,
          timeoutMs: 5_000,
          retries: 0,
          cacheTtlMs: 0,
          cacheMaxEntries: 0,
        },
        silentLogger,
      ),
      key,
    );

  it('gives the same transfers as the log scan, in one query per direction, with the key in the Authorization header', async () => {
    const before = indexer.queries.length;
    const page = await listTransfers(
      { reader: reader(), indexer: fromIndexer(), scan },
      { address: alice, limit: 100 },
    );
    expect(sameSet(page.transfers)).toEqual(sameSet(await expected(alice)));
    expect(indexer.queries.length - before).toBe(2);
  });

  it('covers its range completely when a direction has more than `limit` transfers', async () => {
    const all = await expected(alice);
    const page = await listTransfers({ reader: reader(), indexer: fromIndexer(), scan }, { address: alice, limit: 3 });
    expect(page.transfers.length).toBeGreaterThan(0);
    expect(sameSet(page.transfers)).toEqual(
      sameSet(all.filter((t) => t.blockNumber >= page.fromBlock && t.blockNumber <= page.toBlock)),
    );
  });

  it('fails with an upstream error when the indexer refuses the key', async () => {
    const err = await toolFailure(
      listTransfers({ reader: reader(), indexer: fromIndexer('wrong-key'), scan }, { address: alice, limit: 10 }),
    );
    expect(err.code).toBe('upstream_unavailable');
  });
});

describe('cutting a newest-first list to the limit', () => {
  const t = (block: number, logIndex = 0): FoundTransfer => ({
    hash: `0x${block}${logIndex}`,
    logIndex,
    block,
    from: ZERO,
    to: ZERO,
    token: ZERO,
    raw: 1n,
  });

  it('keeps everything and the scanned range when under the limit', () => {
    expect(cutToLimit([t(5), t(9)], 3, 2)).toEqual({ kept: [t(9), t(5)], fromBlock: 2 });
  });
  it('cuts between blocks and starts the range at the oldest kept block', () => {
    expect(cutToLimit([t(3), t(5), t(9)], 2, 0)).toEqual({ kept: [t(9), t(5)], fromBlock: 5 });
  });
  it('leaves out a block the limit would split', () => {
    expect(cutToLimit([t(5, 0), t(5, 1), t(9)], 2, 0)).toEqual({ kept: [t(9)], fromBlock: 6 });
  });
  it('keeps `limit` transfers of one block that alone holds more than `limit`', () => {
    expect(cutToLimit([t(5, 0), t(5, 1), t(5, 2)], 2, 0)).toEqual({ kept: [t(5, 2), t(5, 1)], fromBlock: 5 });
  });
});
