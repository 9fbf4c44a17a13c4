/**
 * The self-hosted faucet on Base Sepolia (docs/spec-notes.md#self-hosted-faucet): sends 0.0001 ETH (a value transfer)
 * or 1 USDC (ERC-20 `transfer`) from the operator's funded testnet key with viem, and waits for the receipt so a drip
 * that reverted fails the call. It refuses to send on any chain but 84532, so a mainnet RPC URL given by mistake
 * cannot spend real funds. Sends from the key are serialised (nonce taken, signed, submitted one at a time).
 */
import { createWalletClient, defineChain, encodeFunctionData, erc20Abi, http, publicActions, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ToolError } from '../../shared/errors.js';
import type { Logger } from '../../shared/log.js';
import { errorText, evmRpcError } from './evm-rpc.js';
import { DRIP_AMOUNTS, explorerUrl, type Drip, type DripRequest, type Faucet } from './faucet.js';

/** Base Sepolia's chain id: the only chain this faucet sends on. */
export const BASE_SEPOLIA_CHAIN_ID = 84_532;

const LABEL = 'Base Sepolia RPC';

/** Settings of the self-hosted EVM faucet. */
export interface EvmFaucetOptions {
  key: Hex;
  rpcUrl: string;
  /** USDC token contract on Base Sepolia. */
  usdc: string;
  timeoutMs: number;
  retries: number;
  /** How long to wait for the drip's receipt; default 60 s. */
  confirmTimeoutMs?: number;
}

/** A promise chain that runs one job at a time. */
function serial() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(job: () => Promise<T>): Promise<T> => {
    const run = tail.then(job, job);
    tail = run.catch(() => undefined);
    return run;
  };
}

type FaucetClient = ReturnType<typeof baseSepoliaClient>;

/** The wallet client that signs with the faucet key and reads through the configured RPC. */
function baseSepoliaClient(options: EvmFaucetOptions) {
  const chain = defineChain({
    id: BASE_SEPOLIA_CHAIN_ID,
    name: 'Base Sepolia',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [options.rpcUrl] } },
  });
  return createWalletClient({
    account: privateKeyToAccount(options.key),
    chain,
    transport: http(options.rpcUrl, { timeout: options.timeoutMs, retryCount: options.retries, retryDelay: 250 }),
    pollingInterval: 250,
    cacheTime: 0,
  }).extend(publicActions);
}

/** A check, remembered once it passes, that the RPC really serves Base Sepolia; a failed check is tried again. */
function baseSepoliaGuard(client: FaucetClient, log: Logger): () => Promise<void> {
  let checkedChain: Promise<void> | undefined;
  return () => {
    checkedChain ??= client.getChainId().then((id) => {
      if (id !== BASE_SEPOLIA_CHAIN_ID) {
        log.error('the faucet RPC is not Base Sepolia; refusing to send', { chainId: id });
        throw new ToolError(
          'upstream_unavailable',
          `The faucet is misconfigured (its RPC is not Base Sepolia) and sends nothing.`,
        );
      }
    });
    checkedChain.catch(() => {
      checkedChain = undefined;
    });
    return checkedChain;
  };
}

/** Sends one drip at a time from the faucet key, keeping its own nonce ahead of the RPC's pending count. */
function dripSender(client: FaucetClient, usdc: string): (to: Hex, token: 'usdc' | 'eth') => Promise<Hex> {
  const inTurn = serial();
  let nextNonce = 0;
  return (to, token) =>
    inTurn(async () => {
      const pending = await client.getTransactionCount({ address: client.account.address, blockTag: 'pending' });
      const nonce = Math.max(pending, nextNonce);
      const tx =
        token === 'eth'
          ? { to, value: DRIP_AMOUNTS.eth.units }
          : {
              to: usdc as Hex,
              data: encodeFunctionData({
                abi: erc20Abi,
                functionName: 'transfer',
                args: [to, DRIP_AMOUNTS.usdc.units],
              }),
            };
      const hash = await client.sendTransaction({ ...tx, nonce });
      nextNonce = nonce + 1;
      return hash;
    });
}

/** Waits for the drip's receipt and refuses a drip that was not confirmed in time or reverted. */
async function confirmDrip(
  client: FaucetClient,
  { network, token }: DripRequest,
  hash: Hex,
  confirmTimeoutMs: number,
  log: Logger,
): Promise<void> {
  let status: 'success' | 'reverted';
  try {
    ({ status } = await client.waitForTransactionReceipt({ hash, timeout: confirmTimeoutMs }));
  } catch (err) {
    log.warn('faucet drip not confirmed in time', { network, token, transaction: hash });
    throw new ToolError(
      'upstream_timeout',
      `The drip ${hash} was sent but not confirmed in time; check ${explorerUrl(network, hash)} before asking again.`,
      {
        cause: err,
        details: { transactionHash: hash },
      },
    );
  }
  if (status !== 'success') {
    log.error('faucet drip reverted', { network, token, transaction: hash });
    throw new ToolError('upstream_unavailable', `The drip transaction ${hash} reverted. Try again later.`);
  }
}

/** Creates the self-hosted Base Sepolia faucet (ETH and USDC). */
export function createEvmFaucet(options: EvmFaucetOptions, log: Logger): Faucet {
  const client = baseSepoliaClient(options);
  const checkChain = baseSepoliaGuard(client, log);
  const submit = dripSender(client, options.usdc);

  return {
    name: 'self-hosted',
    async drip(request: DripRequest, signal: AbortSignal): Promise<Drip> {
      const { network, token, address } = request;
      if (token === 'sol')
        throw new ToolError('invalid_input', `token sol is only available on solana-devnet.`, {
          field: 'token',
        });
      if (signal.aborted) throw new ToolError('cancelled', 'The call was cancelled before anything was sent.');
      let hash: Hex;
      try {
        await checkChain();
        hash = await submit(address as Hex, token);
      } catch (err) {
        if (err instanceof ToolError) throw err;
        const text = errorText(err);
        if (/insufficient funds|exceeds balance|transfer amount exceeds/i.test(text)) {
          log.error('the self-hosted faucet is out of funds', { network, token, faucet: client.account.address });
          throw new ToolError(
            'upstream_unavailable',
            `The faucet's wallet is out of funds for a ${token.toUpperCase()} drip right now. Try again later or ask for another token.`,
          );
        }
        throw evmRpcError(err, LABEL, options.timeoutMs);
      }
      await confirmDrip(client, request, hash, options.confirmTimeoutMs ?? 60_000, log);
      return { transactionHash: hash, explorer: explorerUrl(network, hash) };
    },
  };
}
