/**
 * The agent's `exact` payer on Stellar (x402 version 2): a SEP-41 `transfer(payer, payTo, amount)` on the asset
 * contract, with the payer's Soroban authorization entry signed and nothing else, for a facilitator that sponsors the
 * fees and rebuilds the transaction around that entry. Written on @stellar/stellar-sdk because the official
 * `@x402/stellar` 2.9 client cannot be pointed at an operator's RPC: its contract client refuses http URLs and it
 * asks the public Horizon for ledger times (docs/agents.md, Wallets).
 */
import {
  Account,
  Address,
  authorizeEntry,
  BASE_FEE,
  Keypair,
  nativeToScVal,
  Networks,
  Operation,
  rpc,
  StrKey,
  TransactionBuilder,
  type Transaction,
  type xdr,
} from '@stellar/stellar-sdk';
import type { PaymentPayload, PaymentRequirements, SchemeNetworkClient } from '@x402/core/types';

/** Network passphrases of the Stellar networks x402 names. */
const PASSPHRASES: Readonly<Record<string, string>> = {
  'stellar:pubnet': Networks.PUBLIC,
  'stellar:testnet': Networks.TESTNET,
};

/** The public Soroban RPC of testnet, used when the network table names none (pubnet has no public default). */
const TESTNET_RPC_URL = 'https://soroban-testnet.stellar.org';

/**
 * Seconds per ledger assumed when turning `maxTimeoutSeconds` into the authorization's expiration ledger: the x402
 * Stellar spec's figure, the one sellers bound the expiration with (a seller allows a little slack on top).
 */
export const STELLAR_LEDGER_SECONDS = 5;

/**
 * The placeholder transaction source (the all-zero account): the facilitator rebuilds the transaction with its own
 * account as source, so the payer's account is never the source and authorizes through its signed entry only.
 */
const PLACEHOLDER_SOURCE = StrKey.encodeEd25519PublicKey(Buffer.alloc(32));

/** Where the payer simulates: the network table's RPC URL for each Stellar network. */
export type StellarRpcUrlOf = (network: string) => string | undefined;

/** The expiration ledger of a payment signed at `latestLedger` with a validity of `maxTimeoutSeconds`. */
function expirationLedger(latestLedger: number, maxTimeoutSeconds: number): number {
  return latestLedger + Math.ceil(maxTimeoutSeconds / STELLAR_LEDGER_SECONDS);
}

/** The requirements a Stellar `exact` payment can be made for, or a sentence saying why not. */
function refusalOf(req: PaymentRequirements): string | undefined {
  if (req.scheme !== 'exact') return `scheme ${req.scheme} is not Stellar exact`;
  if (!PASSPHRASES[req.network]) return `unknown Stellar network ${req.network}`;
  if (!/^[1-9][0-9]*$/.test(req.amount)) return `amount ${req.amount} is not a positive integer`;
  if (!StrKey.isValidContract(req.asset)) return `asset ${req.asset} is not a contract address`;
  if (!StrKey.isValidEd25519PublicKey(req.payTo) && !StrKey.isValidContract(req.payTo))
    return `payTo ${req.payTo} is not a Stellar account or contract address`;
  if ((req.extra as { areFeesSponsored?: unknown } | undefined)?.areFeesSponsored !== true)
    return 'the seller does not sponsor the fees (extra.areFeesSponsored), which Stellar exact requires';
  return undefined;
}

/** A successful simulation, or an error naming the first line of the network's refusal. */
function simulated(sim: rpc.Api.SimulateTransactionResponse, when: string): rpc.Api.SimulateTransactionSuccessResponse {
  if (rpc.Api.isSimulationError(sim))
    throw new Error(`the Stellar network refuses the transfer (${when}): ${sim.error.split('\n')[0]}`);
  if (rpc.Api.isSimulationRestore(sim))
    throw new Error(`the transfer touches archived ledger entries (${when}); restore them first`);
  if (!rpc.Api.isSimulationSuccess(sim)) throw new Error(`unexpected Stellar simulation result (${when})`);
  return sim;
}

/** The `exact` scheme on Stellar networks, paying from one ed25519 account. */
export class StellarExactPayer implements SchemeNetworkClient {
  readonly scheme = 'exact';

  constructor(
    private readonly keypair: Keypair,
    private readonly rpcUrlOf: StellarRpcUrlOf,
  ) {}

  /** Builds the transfer, simulates it, signs the payer's entry and returns the transaction the facilitator expects. */
  async createPaymentPayload(
    x402Version: number,
    req: PaymentRequirements,
  ): Promise<Pick<PaymentPayload, 'x402Version' | 'payload'>> {
    const refused = refusalOf(req);
    if (refused) throw new Error(`cannot pay this Stellar option: ${refused}`);
    const passphrase = PASSPHRASES[req.network]!;
    const server = this.server(req.network);
    const unsigned = this.transfer(req, passphrase, []);
    const recorded = simulated(await server.simulateTransaction(unsigned), 'recording the authorization');
    const entry = this.payerEntry(recorded.result?.auth ?? []);
    const expiration = expirationLedger(recorded.latestLedger, req.maxTimeoutSeconds);
    const signed = await authorizeEntry(entry, this.keypair, expiration, passphrase);
    const tx = this.transfer(req, passphrase, [signed]);
    // The signed entry is simulated once more, so a payment the network would refuse is never handed to the seller.
    const enforced = simulated(await server.simulateTransaction(tx), 'checking the signed authorization');
    const assembled = rpc.assembleTransaction(tx, enforced).build();
    return { x402Version, payload: { transaction: assembled.toXDR() } };
  }

  private server(network: string): rpc.Server {
    const url = this.rpcUrlOf(network) ?? (network === 'stellar:testnet' ? TESTNET_RPC_URL : undefined);
    if (!url)
      throw new Error(
        `no Soroban RPC URL for ${network}: give the network an rpcUrl in the network table (NETWORKS_JSON)`,
      );
    // Plain http is the operator's own choice of node (the network table), as on the seller's side.
    return new rpc.Server(url, { allowHttp: url.startsWith('http:') });
  }

  /** The one-operation transaction calling `transfer(payer, payTo, amount)` on the asset, with the given entries. */
  private transfer(req: PaymentRequirements, passphrase: string, auth: xdr.SorobanAuthorizationEntry[]): Transaction {
    const call = Operation.invokeContractFunction({
      contract: req.asset,
      function: 'transfer',
      args: [
        nativeToScVal(this.keypair.publicKey(), { type: 'address' }),
        nativeToScVal(req.payTo, { type: 'address' }),
        nativeToScVal(BigInt(req.amount), { type: 'i128' }),
      ],
      auth,
    });
    return new TransactionBuilder(new Account(PLACEHOLDER_SOURCE, '0'), {
      fee: BASE_FEE,
      networkPassphrase: passphrase,
    })
      .addOperation(call)
      .setTimeout(req.maxTimeoutSeconds)
      .build();
  }

  /** The single entry the simulation asks of the payer (address credentials, unsigned); anything else is refused. */
  private payerEntry(entries: readonly xdr.SorobanAuthorizationEntry[]): xdr.SorobanAuthorizationEntry {
    const payer = this.keypair.publicKey();
    const [entry] = entries;
    const creds = entry?.credentials();
    const forPayer =
      creds?.switch().name === 'sorobanCredentialsAddress' &&
      Address.fromScAddress(creds.address().address()).toString() === payer;
    if (entries.length !== 1 || !forPayer || entry!.rootInvocation().subInvocations().length > 0)
      throw new Error(
        `the transfer asks for ${entries.length} authorization(s), not just the payer's own for this call; nothing was signed`,
      );
    return entry!;
  }
}
