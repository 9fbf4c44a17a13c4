import { Keypair, Networks } from '@stellar/stellar-sdk';
import { x402Client } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SchemeNetworkClient } from '@x402/core/types';
import { createEd25519Signer } from '@x402/stellar';
import { ExactStellarScheme } from '@x402/stellar/exact/client';
import type { LookAlikeToken } from './stellar-ledger.js';
import { LookAlikeSorobanRpc, tokenBalance } from './stellar-rpc.js';

/** 10 USDC in 7-decimal units: what each payer starts with. */
export const STELLAR_PAYER_FUNDS = 100_000_000n;

/**
 * The RPC URL the official client is given. `@x402/stellar` 2.9 only talks to https RPC URLs (its contract client
 * never sets `allowHttp`) and asks the public Horizon for ledger close times; both requests are routed to the
 * look-alike through the standard `https_proxy` variable its HTTP client (axios) honours while a payment is being
 * created. `.invalid` never resolves, so nothing can leak to a real network.
 */
export const CLIENT_RPC_URL = 'https://soroban-rpc.stellar.invalid';

/** A look-alike Soroban network with USDC (the advertised asset), a second token, and funded accounts. */
export interface StellarEnvironment {
  network: string;
  passphrase: string;
  rpc: LookAlikeSorobanRpc;
  usdc: LookAlikeToken;
  /** Another SAC-like token the payers also hold (wrong-asset tests). */
  other: LookAlikeToken;
  facilitator: Keypair;
  payTo: Keypair;
  payers: Keypair[];
  /** The network entry Tollbooth is configured with. */
  networkEntry: Record<string, unknown>;
  /** Environment for Tollbooth: network entry (NETWORKS_JSON), in-process facilitator secret, pay-to. */
  env: Record<string, string>;
  balance(who: string, token?: LookAlikeToken): bigint;
  stop(): Promise<void>;
}

/**
 * Starts a look-alike Soroban RPC for `stellar:testnet` (or overrides `stellar:pubnet`), creates the facilitator,
 * pay-to and payer accounts, deploys USDC and a second token, and funds every payer with 10 of each.
 */
export async function startStellarEnvironment(
  options: { payers?: number; network?: 'stellar:testnet' | 'stellar:pubnet' } = {},
): Promise<StellarEnvironment> {
  const network = options.network ?? 'stellar:testnet';
  const passphrase = network === 'stellar:pubnet' ? Networks.PUBLIC : Networks.TESTNET;
  const facilitator = Keypair.random();
  const payTo = Keypair.random();
  const payers = Array.from({ length: options.payers ?? 4 }, () => Keypair.random());
  let policy = { facilitator: facilitator.publicKey(), payTo: payTo.publicKey(), asset: '', maxExpirationLedgers: 62 };
  const rpc = new LookAlikeSorobanRpc(passphrase, () => policy);
  await rpc.start();
  const issuer = Keypair.random().publicKey();
  const usdc = rpc.ledger.createToken(`USDC:${issuer}`);
  const other = rpc.ledger.createToken(`EURC:${issuer}`);
  policy = { ...policy, asset: usdc.contract };
  for (const account of [facilitator, payTo, ...payers]) rpc.ledger.createAccount(account.publicKey());
  for (const payer of payers) {
    usdc.balances.set(payer.publicKey(), STELLAR_PAYER_FUNDS);
    other.balances.set(payer.publicKey(), STELLAR_PAYER_FUNDS);
  }
  const networkEntry = {
    id: network,
    family: 'stellar',
    asset: usdc.contract,
    decimals: 7,
    rpcUrl: rpc.url,
    priceColumn: 'stellar',
    schemes: ['exact'],
    label: 'Stellar (look-alike RPC)',
  };
  return {
    network,
    passphrase,
    rpc,
    usdc,
    other,
    facilitator,
    payTo,
    payers,
    networkEntry,
    env: {
      NETWORKS_JSON: JSON.stringify({ networks: [networkEntry] }),
      FACILITATOR_STELLAR_SECRET: facilitator.secret(),
      PAY_TO_STELLAR: payTo.publicKey(),
    },
    balance: (who, token = usdc) => tokenBalance(token, who),
    stop: () => rpc.stop(),
  };
}

const PROXY_VARIABLES = [
  'npm_config_https_proxy',
  'https_proxy',
  'HTTPS_PROXY',
  'npm_config_no_proxy',
  'no_proxy',
  'NO_PROXY',
] as const;
let proxyUsers = 0;
let savedProxy: Partial<Record<(typeof PROXY_VARIABLES)[number], string>> = {};

/**
 * Runs `task` with the https requests of axios-based clients (the official Stellar client) routed to the
 * look-alike; reference-counted, and the previous proxy settings are restored afterwards. Our own code talks to
 * the look-alike's http URL and Node's fetch ignores these variables, so nothing else is affected.
 */
export async function throughLookAlike<T>(env: StellarEnvironment, task: () => Promise<T>): Promise<T> {
  if (proxyUsers++ === 0) {
    savedProxy = Object.fromEntries(
      PROXY_VARIABLES.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]),
    );
    for (const k of PROXY_VARIABLES) delete process.env[k];
    process.env.https_proxy = env.rpc.url;
    process.env.no_proxy = '127.0.0.1,localhost,::1';
  }
  try {
    return await task();
  } finally {
    if (--proxyUsers === 0) {
      for (const k of PROXY_VARIABLES) delete process.env[k];
      Object.assign(process.env, savedProxy);
    }
  }
}

/**
 * The official client: `x402Client` with `@x402/stellar`'s `ExactStellarScheme` and `createEd25519Signer`, pointed
 * at {@link CLIENT_RPC_URL}, preferring the entry of the given network. Use it inside {@link throughLookAlike}.
 */
export function officialStellarClient(env: StellarEnvironment, payer: Keypair, network = env.network): x402Client {
  const client = new x402Client(
    (_v, reqs) => reqs.find((r) => r.network === network && r.scheme === 'exact') ?? reqs[0]!,
  );
  const signer = createEd25519Signer(payer.secret(), network as 'stellar:testnet');
  // @x402/stellar is typed against its own @x402/core 2.9; the runtime contract (scheme + createPaymentPayload) is the same.
  client.register(
    'stellar:*',
    new ExactStellarScheme(signer, { url: CLIENT_RPC_URL }) as unknown as SchemeNetworkClient,
  );
  // Core 2.27 clients only pay assets their scheme recognizes unless told otherwise; the 2.9 scheme recognizes none.
  client.setSpendControls({
    allowedAssets: [env.usdc, env.other].map((t) => ({
      network: network as 'stellar:testnet',
      asset: t.contract,
      maxAmountPerPayment: '100000000',
    })),
  });
  return client;
}

/**
 * Pays with the official client against the look-alike. `signFor` overrides what the client is asked to sign
 * (tamper tests); the returned payload still echoes `accepted` unchanged, as a client cheating on the signed
 * content would.
 */
export async function payStellar(
  env: StellarEnvironment,
  payer: Keypair,
  accepted: PaymentRequirements,
  signFor: Partial<PaymentRequirements> = {},
): Promise<PaymentPayload> {
  const requirements = { ...accepted, ...signFor } as PaymentRequirements;
  const challenge: PaymentRequired = {
    x402Version: 2,
    resource: { url: 'https://tollbooth.test/' },
    accepts: [requirements],
  };
  const payload = await officialStellarPayment(env, payer, challenge, requirements.network);
  return { ...payload, accepted };
}

/** Creates the official client's payment for a challenge, choosing the entry of the given Stellar network. */
export function officialStellarPayment(
  env: StellarEnvironment,
  payer: Keypair,
  challenge: PaymentRequired,
  network = env.network,
): Promise<PaymentPayload> {
  const client = officialStellarClient(env, payer, network);
  return throughLookAlike(env, () => client.createPaymentPayload(challenge));
}
