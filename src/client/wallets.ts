/**
 * The agent's wallets, loaded from its keys: addresses, and the official x402 client schemes that sign with them
 * (EVM exact/upto/v1 from `@x402/evm`, Solana from `@x402/svm`, Algorand from `@x402/avm`). Keys never leave here.
 */
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { toClientAvmSigner } from '@x402/avm';
import { ExactAvmScheme } from '@x402/avm/exact/client';
import { x402Client } from '@x402/core/client';
import type { DefaultAsset, PaymentRequirements, SchemeNetworkClient } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { ExactEvmSchemeV1 } from '@x402/evm/exact/v1/client';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { ExactSvmScheme, toClientSvmSigner } from '@x402/svm';
import { Keypair } from '@stellar/stellar-sdk';
import algosdk from 'algosdk';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { NetworkEntry, NetworkFamily } from '../payments/networks.js';
import { canonicalNetwork, familyOf, rpcUrlOf } from './networks.js';
import type { WalletKeys } from './settings.js';

/** Families whose payments this client can sign. Stellar keys are held but not used: see docs/agents.md (Wallets). */
export const PAYABLE_FAMILIES: readonly NetworkFamily[] = ['evm', 'svm', 'algorand'];

/** Why this client cannot pay an option, or undefined when it can. */
export type Unpayable = 'no_wallet' | 'unsupported_family' | 'unsupported_scheme';

/** The agent's wallets and the official schemes they sign with. */
export interface Wallets {
  /** Address per family the agent holds a key for. */
  addresses: Partial<Record<NetworkFamily, string>>;
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
}

type SchemeFactory = (option: PaymentRequirements, canonical: string) => SchemeNetworkClient;

/** Loads the wallets of the given keys; `networks` lends each scheme its network's RPC URL. */
export async function loadWallets(keys: WalletKeys, networks: readonly NetworkEntry[]): Promise<Wallets> {
  const addresses: Partial<Record<NetworkFamily, string>> = {};
  const factories = new Map<string, SchemeFactory>();
  let evmAccount: PrivateKeyAccount | undefined;
  if (keys.evm) {
    const account = privateKeyToAccount(keys.evm);
    evmAccount = account;
    addresses.evm = account.address;
    const exact = new ExactEvmScheme(account);
    const upto = new UptoEvmScheme(account);
    const v1 = new ExactEvmSchemeV1(account);
    factories.set('evm:exact:2', () => exact);
    factories.set('evm:upto:2', () => upto);
    factories.set('evm:exact:1', () => v1);
    // A version-2 entry under a version-1 short name (e.g. `base`) is signed by the v1 signer, as the official client does.
    factories.set('evm:exact:2:short', () => v1);
  }
  if (keys.svm) {
    const signer = toClientSvmSigner(await createKeyPairSignerFromBytes(keys.svm));
    addresses.svm = signer.address;
    const byNetwork = new Map<string, SchemeNetworkClient>();
    factories.set('svm:exact:2', (_o, canonical) => {
      let scheme = byNetwork.get(canonical);
      if (!scheme) {
        const rpcUrl = rpcUrlOf(networks, canonical);
        scheme = new ExactSvmScheme(signer, rpcUrl ? { rpcUrl } : undefined);
        byNetwork.set(canonical, scheme);
      }
      return scheme;
    });
  }
  if (keys.algorand) {
    const signer = toClientAvmSigner(Buffer.from(keys.algorand).toString('base64'));
    addresses.algorand = algosdk.encodeAddress(keys.algorand.slice(32));
    const byNetwork = new Map<string, SchemeNetworkClient>();
    factories.set('algorand:exact:2', (_o, canonical) => {
      let scheme = byNetwork.get(canonical);
      if (!scheme) {
        const algodUrl = rpcUrlOf(networks, canonical);
        // @x402/avm is typed against its own @x402/core 2.26; the scheme contract is the same.
        scheme = new ExactAvmScheme(signer, algodUrl ? { algodUrl } : undefined) as unknown as SchemeNetworkClient;
        byNetwork.set(canonical, scheme);
      }
      return scheme;
    });
  }
  if (keys.stellar) addresses.stellar = Keypair.fromSecret(keys.stellar).publicKey();

  const factoryFor = (option: PaymentRequirements, x402Version: number): SchemeFactory | undefined => {
    const family = familyOf(canonicalNetwork(option.network));
    const short = x402Version === 2 && !option.network.includes(':') ? ':short' : '';
    return family ? factories.get(`${family}:${option.scheme}:${x402Version}${short}`) : undefined;
  };

  return {
    addresses,
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
      const scheme = factory(option, canonicalNetwork(option.network));
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
    },
    evmAccount() {
      if (!evmAccount) throw new Error('no EVM wallet (WALLET_EVM_PRIVATE_KEY) signs MPP evm/charge credentials');
      return evmAccount;
    },
  };
}
