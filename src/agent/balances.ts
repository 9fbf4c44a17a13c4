/**
 * Stablecoin balances of the agent's wallets on the networks of its table that have an RPC URL: ERC-20
 * `balanceOf` (EVM), the associated token account (Solana), the account's asset holding on algod (Algorand).
 * Each read is bounded in time and fails on its own; a family's SDK loads with its first read.
 */
import type { Address } from 'viem';
import type { NetworkEntry, NetworkFamily } from '../shared/networks.js';
import { toUsdMicros, usd } from './choose.js';
import { matchesAny } from './networks.js';

/** One balance read: the amount, or why it could not be read. */
export type BalanceRead =
  | { network: string; label?: string; asset: string; ok: true; amount: string; decimals: number; usd: string }
  | { network: string; label?: string; asset: string; ok: false; error: string };

const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const ASSOCIATED_TOKEN_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';

async function evmBalance(rpcUrl: string, asset: string, owner: string, timeoutMs: number): Promise<bigint> {
  const { createPublicClient, erc20Abi, http } = await import('viem');
  const client = createPublicClient({ transport: http(rpcUrl, { timeout: timeoutMs, retryCount: 0 }) });
  return client.readContract({
    address: asset as Address,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [owner as Address],
  });
}

async function solanaBalance(rpcUrl: string, mint: string, owner: string, timeoutMs: number): Promise<bigint> {
  const { address, createSolanaRpc, getAddressEncoder, getProgramDerivedAddress } = await import('@solana/kit');
  const encoder = getAddressEncoder();
  const [ata] = await getProgramDerivedAddress({
    programAddress: address(ASSOCIATED_TOKEN_PROGRAM),
    seeds: [encoder.encode(address(owner)), encoder.encode(address(TOKEN_PROGRAM)), encoder.encode(address(mint))],
  });
  const { value } = await createSolanaRpc(rpcUrl)
    .getAccountInfo(ata, { encoding: 'base64' })
    .send({ abortSignal: AbortSignal.timeout(timeoutMs) });
  if (!value) return 0n;
  // An SPL token account: mint (32 bytes), owner (32 bytes), then the amount as a little-endian u64.
  return Buffer.from(value.data[0], 'base64').readBigUInt64LE(64);
}

async function algorandBalance(algodUrl: string, assetId: string, owner: string, timeoutMs: number): Promise<bigint> {
  const res = await fetch(`${algodUrl.replace(/\/+$/, '')}/v2/accounts/${owner}`, {
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new Error(`algod answered ${res.status}`);
  const account = (await res.json()) as { assets?: Array<{ 'asset-id': number | string; amount: number | string }> };
  const holding = account.assets?.find((a) => String(a['asset-id']) === assetId);
  return holding ? BigInt(holding.amount) : 0n;
}

const READERS: Partial<
  Record<NetworkFamily, (rpcUrl: string, asset: string, owner: string, timeoutMs: number) => Promise<bigint>>
> = {
  evm: evmBalance,
  svm: solanaBalance,
  algorand: algorandBalance,
};

/** Reads the balance of every network of the table, for a family the agent holds a wallet for, that has an RPC URL and is allowed. */
export async function readBalances(
  networks: readonly NetworkEntry[],
  addresses: Partial<Record<NetworkFamily, string>>,
  allowed: readonly string[] | undefined,
  timeoutMs = 5_000,
): Promise<BalanceRead[]> {
  const targets = networks.filter(
    (n) => n.rpcUrl && addresses[n.family] && READERS[n.family] && (!allowed || matchesAny(n.id, allowed)),
  );
  return Promise.all(
    targets.map(async (n): Promise<BalanceRead> => {
      const base = { network: n.id, ...(n.label ? { label: n.label } : {}), asset: n.asset };
      try {
        const raw = await READERS[n.family]!(n.rpcUrl!, n.asset, addresses[n.family]!, timeoutMs);
        return {
          ...base,
          ok: true,
          amount: raw.toString(),
          decimals: n.decimals,
          usd: usd(toUsdMicros(raw, n.decimals)),
        };
      } catch (err) {
        return {
          ...base,
          ok: false,
          error: String((err as Error)?.message ?? err)
            .split('\n', 1)[0]!
            .slice(0, 200),
        };
      }
    }),
  );
}
