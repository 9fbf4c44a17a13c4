/**
 * The agent's wallets, loaded from its keys: addresses, and the official x402 client schemes that sign with them
 * (EVM exact/upto/v1 from `@x402/evm`, Solana from `@x402/svm`, Algorand from `@x402/avm`), and Stellar `exact` from
 * our own payer on @stellar/stellar-sdk (stellar-payer.ts: the official client cannot use the table's RPC). Keys never leave here.
 * Each family's SDK loads with its key only: an agent without a Solana key never loads @solana/kit, one without any key
 * none of them (remote mode starts per conversation: its start-up is what an MCP host waits for).
 */
import type { x402Client } from '@x402/core/client';
import type { DefaultAsset, PaymentRequirements, SchemeNetworkClient } from '@x402/core/types';
import type {
  BatchSettlementDepositStrategy,
  BatchSettlementEvmScheme,
  ClientChannelStorage,
} from '@x402/evm/batch-settlement/client';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { NetworkEntry, NetworkFamily } from '../shared/networks.js';
import { canonicalNetwork, familyOf, rpcUrlOf } from './networks.js';
import { SDK } from './wallet-sdks.js';
import type { WalletKeys } from './settings.js';

/** Families whose payments this client can sign. */
export const PAYABLE_FAMILIES: readonly NetworkFamily[] = ['evm', 'svm', 'algorand', 'stellar'];

/** Why this client cannot pay an option, or undefined when it can. */
export type Unpayable = 'no_wallet' | 'unsupported_family' | 'unsupported_scheme';

/** The agent's wallets and the official schemes they sign with. */
export interface Wallets {
  /** Address per family the agent holds a key for. */
  addresses: Partial<Record<NetworkFamily, string>>;
  /** Resolves once every signing scheme is loaded (at once, unless `loadWallets` deferred the EVM ones). */
  ready(): Promise<void>;
  /** Why an option cannot be paid here (no key for its family, or a scheme/version this client does not sign), else undefined. */
  unpayable(option: PaymentRequirements, x402Version: number): Unpayable | undefined;
  /** The asset as the official scheme knows it (USD-pegged defaults), for assets the network table does not list. */
  defaultAsset(option: PaymentRequirements, x402Version: number): DefaultAsset | undefined;
  /**
   * The official `x402Client`, set up to pay exactly this option and nothing above `capAtomic` (its spend
   * controls allow the option's asset with that per-payment cap).
   */
  clientFor(option: PaymentRequirements, x402Version: number, capAtomic: bigint): x402Client;
  /** The EVM account that signs MPP `evm`/`charge` credentials; throws without an EVM key. */
  evmAccount(): PrivateKeyAccount;
  /** The batch-settlement client scheme of a network (refunds go through it); undefined when not paying with it. */
  batchScheme?(network: string): BatchSettlementEvmScheme | undefined;
}

type SchemeFactory = (option: PaymentRequirements, canonical: string) => SchemeNetworkClient;

/**
 * What paying with `batch-settlement` needs besides the key: the channel state in the agent's store (so a channel
 * survives restarts) and the deposit sizing bounded by the budget (src/agent/batch-pay.ts).
 */
export interface BatchSigning {
  storage: ClientChannelStorage;
  depositStrategy: BatchSettlementDepositStrategy;
}

/** The signers loaded so far: the address per family, the scheme factory per `family:scheme:version`, the EVM account. */
interface Signers {
  addresses: Partial<Record<NetworkFamily, string>>;
  factories: Map<string, SchemeFactory>;
  evmAccount?: PrivateKeyAccount;
}

/** One scheme per network (each lent its network's RPC URL from the table), made on first use. */
function perNetwork(make: (canonical: string) => SchemeNetworkClient): SchemeFactory {
  const byNetwork = new Map<string, SchemeNetworkClient>();
  return (_option, canonical) => {
    let scheme = byNetwork.get(canonical);
    if (!scheme) {
      scheme = make(canonical);
      byNetwork.set(canonical, scheme);
    }
    return scheme;
  };
}

/** The EVM account (its address; it signs MPP credentials), from viem/accounts: a fraction of viem. */
async function addEvmAccount(signers: Signers, key: `0x${string}`): Promise<void> {
  const { privateKeyToAccount } = await SDK.account();
  signers.evmAccount = privateKeyToAccount(key);
  signers.addresses.evm = signers.evmAccount.address;
}

/** The EVM signers: `exact` and `upto` (version 2) and `exact` version 1, all with the one account. */
async function addEvm(signers: Signers): Promise<void> {
  const [{ ExactEvmScheme }, { UptoEvmScheme }, { ExactEvmSchemeV1 }] = await SDK.evm();
  const account = signers.evmAccount!;
  const exact = new ExactEvmScheme(account);
  const upto = new UptoEvmScheme(account);
  const v1 = new ExactEvmSchemeV1(account);
  signers.factories.set('evm:exact:2', () => exact);
  signers.factories.set('evm:upto:2', () => upto);
  signers.factories.set('evm:exact:1', () => v1);
  // A version-2 entry under a version-1 short name (e.g. `base`) is signed by the v1 signer, as the official client does.
  signers.factories.set('evm:exact:2:short', () => v1);
}

/**
 * The official batch-settlement client scheme (`evm:batch-settlement:2`), one per network, reading the escrow through
 * the network's RPC URL when the table has one (to recover a channel the store lost). The deposit multiplier is left
 * wide: the deposit is sized, and bounded by the budget, by `batch.depositStrategy`.
 */
async function addBatch(signers: Signers, batch: BatchSigning, networks: readonly NetworkEntry[]): Promise<void> {
  const [{ createPublicClient, http }, { toClientEvmSigner }, { BatchSettlementEvmScheme }] = await SDK.batch();
  const account = signers.evmAccount!;
  signers.factories.set(
    'evm:batch-settlement:2',
    perNetwork((canonical) => {
      const rpcUrl = rpcUrlOf(networks, canonical);
      const signer = rpcUrl
        ? toClientEvmSigner(account, createPublicClient({ transport: http(rpcUrl) }))
        : toClientEvmSigner(account);
      return new BatchSettlementEvmScheme(signer, {
        storage: batch.storage,
        depositStrategy: batch.depositStrategy,
        depositPolicy: { depositMultiplier: 1_000_000 },
      });
    }),
  );
}

async function addSvm(signers: Signers, key: Uint8Array, networks: readonly NetworkEntry[]): Promise<void> {
  const [{ createKeyPairSignerFromBytes }, { ExactSvmScheme, toClientSvmSigner }] = await SDK.svm();
  const signer = toClientSvmSigner(await createKeyPairSignerFromBytes(key));
  signers.addresses.svm = signer.address;
  signers.factories.set(
    'svm:exact:2',
    perNetwork((canonical) => {
      const rpcUrl = rpcUrlOf(networks, canonical);
      return new ExactSvmScheme(signer, rpcUrl ? { rpcUrl } : undefined);
    }),
  );
}

async function addAlgorand(signers: Signers, key: Uint8Array, networks: readonly NetworkEntry[]): Promise<void> {
  const [{ default: algosdk }, { toClientAvmSigner }, { ExactAvmScheme }] = await SDK.algorand();
  const signer = toClientAvmSigner(Buffer.from(key).toString('base64'));
  signers.addresses.algorand = algosdk.encodeAddress(key.slice(32));
  signers.factories.set(
    'algorand:exact:2',
    perNetwork((canonical) => {
      const algodUrl = rpcUrlOf(networks, canonical);
      // @x402/avm is typed against its own @x402/core 2.26; the scheme contract is the same.
      return new ExactAvmScheme(signer, algodUrl ? { algodUrl } : undefined) as unknown as SchemeNetworkClient;
    }),
  );
}

/** The Stellar signer: `exact` (version 2), simulating through each network's RPC URL from the table. */
async function addStellar(signers: Signers, secret: string, networks: readonly NetworkEntry[]): Promise<void> {
  const [{ Keypair }, { StellarExactPayer }] = await SDK.stellar();
  const keypair = Keypair.fromSecret(secret);
  signers.addresses.stellar = keypair.publicKey();
  const payer = new StellarExactPayer(keypair, (canonical) => rpcUrlOf(networks, canonical));
  signers.factories.set('stellar:exact:2', () => payer);
}

/** The official `x402Client` paying exactly `option` with `scheme`, nothing above `capAtomic`. */
function cappedClient(
  x402Client: typeof import('@x402/core/client').x402Client,
  option: PaymentRequirements,
  x402Version: number,
  scheme: SchemeNetworkClient,
  capAtomic: bigint,
): x402Client {
  const client = new x402Client((_v, accepts) => accepts[0]!);
  if (x402Version === 1) client.registerV1(option.network, scheme);
  else client.register(option.network as never, scheme);
  // Our own choice already applied the budget; the official spend controls hold the same per-payment cap.
  client.setSpendControls({
    maxAmountPerPayment: false,
    allowedAssets: [
      { network: option.network as never, asset: option.asset, maxAmountPerPayment: capAtomic.toString() },
    ],
  });
  return client;
}

/**
 * Loads the wallets of the given keys; `networks` lends each scheme its network's RPC URL. With `batch` (and an EVM
 * key), `batch-settlement` entries are signed too. With `deferEvmSchemes` (remote mode), an EVM key's address is
 * known at once and its signing schemes (viem, `@x402/evm`: most of a start with an EVM key) load with the first
 * `ready()`: everything but `addresses` and `evmAccount` waits for it, and refuses loudly when called before.
 */
export async function loadWallets(
  keys: WalletKeys,
  networks: readonly NetworkEntry[],
  batch?: BatchSigning,
  options: { deferEvmSchemes?: boolean } = {},
): Promise<Wallets> {
  const signers: Signers = { addresses: {}, factories: new Map() };
  if (keys.evm) await addEvmAccount(signers, keys.evm);
  const evmSchemes = async () => {
    if (keys.evm) await addEvm(signers);
    if (keys.evm && batch) await addBatch(signers, batch, networks);
  };
  const defer = options.deferEvmSchemes === true && keys.evm !== undefined;
  if (!defer) await evmSchemes();
  if (keys.svm) await addSvm(signers, keys.svm, networks);
  if (keys.algorand) await addAlgorand(signers, keys.algorand, networks);
  if (keys.stellar) await addStellar(signers, keys.stellar, networks);
  // The official client's class (@x402/core, which loads no chain SDK).
  const { x402Client } = await import('@x402/core/client');
  let loaded = !defer;
  let loading: Promise<void> | undefined;
  // Deferred schemes start loading with the first `ready()` (remote mode: once it answers the MCP host).
  const ready = () =>
    (loading ??= (defer ? evmSchemes() : Promise.resolve()).then(() => {
      loaded = true;
    }));
  return walletsOver(signers, x402Client, ready, () => loaded);
}

/** The wallets over loaded signers; the schemes are asked for only once `isLoaded()` (see `loadWallets`). */
function walletsOver(
  signers: Signers,
  x402Client: typeof import('@x402/core/client').x402Client,
  ready: () => Promise<void>,
  isLoaded: () => boolean,
): Wallets {
  const { addresses, factories } = signers;
  const schemes = () => {
    if (!isLoaded()) throw new Error('the wallets are still loading their signing schemes: wait for wallets.ready()');
    return factories;
  };
  const factoryFor = (option: PaymentRequirements, x402Version: number): SchemeFactory | undefined => {
    const family = familyOf(canonicalNetwork(option.network));
    const short = x402Version === 2 && !option.network.includes(':') ? ':short' : '';
    return family ? schemes().get(`${family}:${option.scheme}:${x402Version}${short}`) : undefined;
  };
  return {
    addresses,
    ready,
    unpayable(option, x402Version) {
      const family = familyOf(canonicalNetwork(option.network));
      if (!family || !PAYABLE_FAMILIES.includes(family)) return 'unsupported_family';
      if (!addresses[family]) return 'no_wallet';
      return factoryFor(option, x402Version) ? undefined : 'unsupported_scheme';
    },
    defaultAsset(option, x402Version) {
      const factory = factoryFor(option, x402Version);
      return factory?.(option, canonicalNetwork(option.network)).findDefaultAsset?.(
        option.asset,
        option.network as never,
      );
    },
    clientFor(option, x402Version, capAtomic) {
      const factory = factoryFor(option, x402Version);
      if (!factory)
        throw new Error(`no wallet signs ${option.scheme} on ${option.network} (x402 version ${x402Version})`);
      return cappedClient(
        x402Client,
        option,
        x402Version,
        factory(option, canonicalNetwork(option.network)),
        capAtomic,
      );
    },
    evmAccount() {
      if (!signers.evmAccount)
        throw new Error('no EVM wallet (WALLET_EVM_PRIVATE_KEY) signs MPP evm/charge credentials');
      return signers.evmAccount;
    },
    batchScheme(network) {
      const factory = schemes().get('evm:batch-settlement:2');
      const canonical = canonicalNetwork(network);
      return factory?.({ network } as PaymentRequirements, canonical) as BatchSettlementEvmScheme | undefined;
    },
  };
}
