import algosdk from 'algosdk';
import { ALGORAND_MAINNET } from '../../../src/shared/networks.js';
import { AlgorandLedger } from './algorand-ledger.js';
import { startAlgodLookAlike, type AlgodLookAlike } from './algorand-server.js';

/** Genesis hashes of Algorand mainnet and testnet (the chains the official `@x402/avm` schemes accept). */
export const GENESIS = {
  mainnet: 'wGHE2Pwdvd7S12BL5FaOP20EGYesN73ktiC1qzkkit8=',
  testnet: 'SGO1GKSzyE7IEPItTxCByw9x8FmnrCDexi9/cOUJOiI=',
} as const;
const GENESIS_ID = { mainnet: 'mainnet-v1.0', testnet: 'testnet-v1.0' } as const;

/** A look-alike algod with an ASA, a funded fee payer, an opted-in pay-to, funded payers and the server environment. */
export interface AlgorandEnvironment {
  algod: AlgodLookAlike;
  ledger: AlgorandLedger;
  /** The network id our table uses (`algorand:<full genesis hash>`). */
  network: string;
  assetId: bigint;
  feePayer: algosdk.Account;
  payTo: string;
  payers: algosdk.Account[];
  /** Environment for Tollbooth: the Algorand entry (ASA + look-alike rpcUrl), fee-payer mnemonic and pay-to. */
  env: Record<string, string>;
  /** ASA units an address holds. */
  balance(address: string): bigint;
  stop(): Promise<void>;
}

/** Starts a look-alike algod for Algorand mainnet (or testnet) holding an ASA and funded accounts. */
export async function startAlgorandEnvironment(
  payerCount = 4,
  chain: keyof typeof GENESIS = 'mainnet',
): Promise<AlgorandEnvironment> {
  const ledger = new AlgorandLedger(new Uint8Array(Buffer.from(GENESIS[chain], 'base64')), GENESIS_ID[chain]);
  const creator = algosdk.generateAccount();
  const feePayer = algosdk.generateAccount();
  const payTo = algosdk.generateAccount();
  const payers = Array.from({ length: payerCount }, () => algosdk.generateAccount());
  for (const a of [creator, feePayer, payTo, ...payers]) ledger.fund(a.addr.toString(), 10_000_000n);
  const assetId = ledger.createAsset(creator.addr.toString(), 1_000_000_000_000n, 6);
  ledger.optIn(payTo.addr.toString(), assetId);
  for (const p of payers) ledger.grant(p.addr.toString(), assetId, 10_000_000n);
  const algod = await startAlgodLookAlike(ledger);
  const network = chain === 'mainnet' ? ALGORAND_MAINNET : `algorand:${GENESIS.testnet}`;
  const entry = {
    id: network,
    family: 'algorand',
    asset: assetId.toString(),
    decimals: 6,
    rpcUrl: algod.url,
    label: 'Algorand (look-alike algod)',
  };
  return {
    algod,
    ledger,
    network,
    assetId,
    feePayer,
    payTo: payTo.addr.toString(),
    payers,
    env: {
      NETWORKS_JSON: JSON.stringify({ networks: [entry] }),
      FACILITATOR_ALGORAND_MNEMONIC: algosdk.secretKeyToMnemonic(feePayer.sk),
      PAY_TO_ALGORAND: payTo.addr.toString(),
    },
    balance: (address) => ledger.assetOf(address, assetId),
    stop: () => algod.stop(),
  };
}
