import type { Address } from '@solana/kit';
import { getMintDecoder, getTokenDecoder, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { SolanaLedger } from '../chain/solana-ledger.js';
import { startLookalikeServer, type Lookalike, type LookalikeOptions } from './server.js';

/** The wallet-reading Solana look-alike: the ledger's balances, everything else forwarded to the ledger's RPC. */
export interface SolanaWalletRpc extends Lookalike {
  /** Requests received per JSON-RPC method. */
  calls: Map<string, number>;
}

/** `getTokenAccountsByOwner` (mint filter, jsonParsed) from the ledger: the owner's associated token account, if any. */
async function tokenAccounts(
  ledger: SolanaLedger,
  params: unknown[],
): Promise<{ result: unknown } | { error: unknown }> {
  const context = { apiVersion: '2.2.0', slot: Number(ledger.svm.getClock().slot) };
  const owner = params[0] as Address;
  const mint = (params[1] as { mint?: Address }).mint;
  if (!mint) return { error: { code: -32602, message: 'the look-alike supports the mint filter only' } };
  const ata = await ledger.ata(owner, mint);
  const account = ledger.svm.getAccount(ata);
  if (!account.exists) return { result: { context, value: [] } };
  const token = getTokenDecoder().decode(account.data);
  const mintAccount = ledger.svm.getAccount(mint);
  if (!mintAccount.exists) return { error: { code: -32602, message: `unknown mint ${mint}` } };
  const { decimals } = getMintDecoder().decode(mintAccount.data);
  const ui = Number(token.amount) / 10 ** decimals;
  const info = {
    isNative: false,
    mint,
    owner,
    state: 'initialized',
    tokenAmount: { amount: token.amount.toString(), decimals, uiAmount: ui, uiAmountString: String(ui) },
  };
  const value = [
    {
      pubkey: ata,
      account: {
        data: { program: 'spl-token', parsed: { info, type: 'account' }, space: account.data.length },
        executable: false,
        lamports: Number(account.lamports),
        owner: TOKEN_PROGRAM_ADDRESS,
        rentEpoch: 0,
        space: account.data.length,
      },
    },
  ];
  return { result: { context, value } };
}

/**
 * Starts a JSON-RPC look-alike that answers `getBalance` and `getTokenAccountsByOwner` (mint filter, jsonParsed;
 * the owner's associated token account) from a litesvm ledger and forwards every other method (blockhash, send,
 * signature statuses) to `inner`, the ledger's own look-alike RPC. `error200` answers a JSON-RPC error.
 */
export async function startSolanaWalletRpc(
  ledger: SolanaLedger,
  inner: string,
  options: LookalikeOptions = {},
): Promise<SolanaWalletRpc> {
  const calls = new Map<string, number>();
  const context = () => ({ apiVersion: '2.2.0', slot: Number(ledger.svm.getClock().slot) });
  const server = await startLookalikeServer(async (req, mode) => {
    const body = req.body as { id?: unknown; method?: string; params?: unknown[] };
    const method = String(body?.method);
    const id = body?.id ?? null;
    calls.set(method, (calls.get(method) ?? 0) + 1);
    if (mode === 'error200')
      return { json: { jsonrpc: '2.0', id, error: { code: -32005, message: `${method} failed in the look-alike` } } };
    const params = body.params ?? [];
    if (method === 'getBalance') {
      return {
        json: {
          jsonrpc: '2.0',
          id,
          result: { context: context(), value: Number(ledger.lamports(params[0] as Address)) },
        },
      };
    }
    if (method === 'getTokenAccountsByOwner')
      return { json: { jsonrpc: '2.0', id, ...(await tokenAccounts(ledger, params)) } };
    const res = await fetch(inner, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: req.rawBody,
    });
    return { status: res.status, json: (await res.json()) as unknown };
  }, options);
  return Object.defineProperties(server, { calls: { value: calls } }) as SolanaWalletRpc;
}
