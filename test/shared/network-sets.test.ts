import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { x402Client } from '@x402/core/client';
import {
  ALGORAND_TESTNET_CAIP2,
  ALGORAND_TESTNET_GENESIS_HASH,
  USDC_TESTNET_ASA_ID,
  normalizeAlgorandNetwork,
} from '@x402/avm';
import { getDefaultAsset } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import {
  DEFAULT_TOKEN_DECIMALS,
  STELLAR_TESTNET_CAIP2,
  USDC_TESTNET_ADDRESS as STELLAR_USDC_TESTNET,
} from '@x402/stellar';
import { SOLANA_DEVNET_CAIP2, USDC_DEVNET_ADDRESS } from '@x402/svm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import {
  DEFAULT_FACILITATOR_URLS,
  PUBLIC_TESTNET_FACILITATOR_URL,
  TESTNET_NETWORKS,
  defaultNetworkTable,
  fixedNetworks,
} from '../../src/shared/network-sets.js';
import {
  ALGORAND_TESTNET,
  BASE_MAINNET,
  BASE_SEPOLIA,
  DEFAULT_NETWORKS,
  SOLANA_DEVNET,
  SOLANA_MAINNET,
  STELLAR_TESTNET,
} from '../../src/shared/networks.js';
import { buildChallenge } from '../../src/payments/challenges/requirements.js';
import type { AnyPaidToolDefinition } from '../../src/tool/tool.js';
import { paidTools as tools } from '../../tools/index.js';

const payTo = {
  PAY_TO_EVM: '0x1111111111111111111111111111111111111111',
  PAY_TO_SOLANA: 'JAQ5MVHbCkSYRzXunsrNuM2m1LS859PGveHfoYPAmcvZ',
  PAY_TO_STELLAR: 'GAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAWHF',
  PAY_TO_ALGORAND: '737P57X6737P57X6737P57X6737P57X6737P57X6737P57X6737JO4454Y',
};
const all = tools as unknown as AnyPaidToolDefinition[];
const entry = (id: string) => TESTNET_NETWORKS.find((n) => n.id === id)!;
const TESTNET_IDS = [BASE_SEPOLIA, SOLANA_DEVNET, STELLAR_TESTNET, ALGORAND_TESTNET];

/** Every entry of a tool's challenge, with version-1 short names (`base-sepolia`) kept as they are advertised. */
const accepts = (config: ReturnType<typeof loadConfig>, tool: AnyPaidToolDefinition) =>
  buildChallenge(config, tool).accepts as Array<PaymentRequirements & { maxAmountRequired?: string }>;
const V1_NAMES: Record<string, string> = { 'base-sepolia': BASE_SEPOLIA, base: BASE_MAINNET };

describe('the testnet set: the testnet twins of the default table', () => {
  it('lists Base Sepolia, Solana devnet, Stellar testnet and Algorand testnet USDC, in the default table order', () => {
    expect(TESTNET_NETWORKS.map((n) => n.id)).toEqual(TESTNET_IDS);
    expect(TESTNET_NETWORKS.map((n) => n.family)).toEqual(['evm', 'svm', 'stellar', 'algorand']);
    expect(defaultNetworkTable('testnet')).toBe(TESTNET_NETWORKS);
    expect(defaultNetworkTable('mainnet')).toBe(DEFAULT_NETWORKS);
  });

  it('uses the assets, decimals and EIP-712 domain of the official x402 packages', () => {
    const base = getDefaultAsset(BASE_SEPOLIA);
    expect(entry(BASE_SEPOLIA)).toMatchObject({
      asset: base.asset,
      decimals: base.decimals,
      name: base.name,
      version: base.version,
    });
    expect(entry(BASE_SEPOLIA)).toMatchObject({
      asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
      name: 'USDC',
      version: '2',
      decimals: 6,
    });
    expect(SOLANA_DEVNET).toBe(SOLANA_DEVNET_CAIP2);
    expect(entry(SOLANA_DEVNET)).toMatchObject({ asset: USDC_DEVNET_ADDRESS, decimals: 6 });
    expect(STELLAR_TESTNET).toBe(STELLAR_TESTNET_CAIP2);
    expect(entry(STELLAR_TESTNET)).toMatchObject({
      asset: STELLAR_USDC_TESTNET,
      decimals: DEFAULT_TOKEN_DECIMALS,
      priceColumn: 'stellar',
    });
    // The long (specification) form of the id, like the mainnet entry; @x402/avm reads it as its short form.
    expect(ALGORAND_TESTNET).toBe(`algorand:${ALGORAND_TESTNET_GENESIS_HASH}`);
    expect(normalizeAlgorandNetwork(ALGORAND_TESTNET)).toBe(ALGORAND_TESTNET_CAIP2);
    expect(entry(ALGORAND_TESTNET)).toMatchObject({ asset: USDC_TESTNET_ASA_ID, decimals: 6 });
  });

  it('names the public x402.org facilitator for Base and Solana only, and no facilitator on mainnet', () => {
    expect(DEFAULT_FACILITATOR_URLS.testnet).toEqual({
      evm: PUBLIC_TESTNET_FACILITATOR_URL,
      svm: PUBLIC_TESTNET_FACILITATOR_URL,
    });
    expect(PUBLIC_TESTNET_FACILITATOR_URL).toBe('https://x402.org/facilitator');
    expect(DEFAULT_FACILITATOR_URLS.mainnet).toEqual({});
  });
});

describe('the networks of the tools with fixed options (token-report, smm-order, transfers-evm)', () => {
  it("takes the set's own Base and Solana, else the twin the table holds", () => {
    expect(fixedNetworks(DEFAULT_NETWORKS, 'mainnet')).toMatchObject({
      base: { id: BASE_MAINNET },
      baseV1Name: 'base',
      solana: { id: SOLANA_MAINNET },
    });
    expect(fixedNetworks(TESTNET_NETWORKS, 'testnet')).toMatchObject({
      base: { id: BASE_SEPOLIA },
      baseV1Name: 'base-sepolia',
      solana: { id: SOLANA_DEVNET },
    });
    expect(fixedNetworks([entry(BASE_SEPOLIA)], 'mainnet')).toEqual({
      base: entry(BASE_SEPOLIA),
      baseV1Name: 'base-sepolia',
    });
    expect(fixedNetworks([...DEFAULT_NETWORKS, ...TESTNET_NETWORKS], 'testnet')).toMatchObject({
      base: { id: BASE_SEPOLIA },
      solana: { id: SOLANA_DEVNET },
    });
  });

  it('refuses a table with neither Base nor Base Sepolia, naming both', () => {
    expect(() => fixedNetworks([entry(ALGORAND_TESTNET)], 'testnet')).toThrow(
      /neither Base \(eip155:8453\) nor Base Sepolia \(eip155:84532\)/,
    );
  });
});

describe("every tool's challenge on the testnet set", () => {
  const config = loadConfig({ ...payTo, TOLLBOOTH_NETWORK_SET: 'testnet', LOG_LEVEL: 'silent' });

  it('names only testnet networks, with the twin assets and, on Base Sepolia, the USDC "2" EIP-712 domain', () => {
    expect(config.networkSet).toBe('testnet');
    expect(config.networks.map((n) => n.id)).toEqual(TESTNET_IDS);
    for (const tool of all) {
      const entries = accepts(config, tool);
      expect(entries.length, tool.name).toBeGreaterThan(0);
      for (const e of entries) {
        const id = V1_NAMES[e.network] ?? e.network;
        expect(TESTNET_IDS, `${tool.name} ${e.network}`).toContain(id);
        expect(e.asset, `${tool.name} ${e.network}`).toBe(entry(id).asset);
        if (id === BASE_SEPOLIA) expect(e.extra, tool.name).toMatchObject({ name: 'USDC', version: '2' });
      }
    }
  });

  it('offers the tools group on all four testnets, token-report on Base Sepolia and Solana devnet, smm-order and transfers-evm on base-sepolia', () => {
    const byName = (name: string) => all.find((t) => t.name === name)!;
    expect(accepts(config, byName('annuity')).map((e) => `${e.scheme} ${e.network}`)).toEqual(
      TESTNET_IDS.map((id) => `exact ${id}`),
    );
    expect(accepts(config, byName('token-report')).map((e) => e.network)).toEqual([BASE_SEPOLIA, SOLANA_DEVNET]);
    expect(accepts(config, byName('smm-order')).map((e) => e.network)).toEqual(['base-sepolia']);
    expect(buildChallenge(config, byName('transfers-evm'))).toMatchObject({
      x402Version: 1,
      accepts: [{ network: 'base-sepolia', asset: entry(BASE_SEPOLIA).asset }],
    });
  });

  it('amounts follow the decimals: the Stellar entry uses the 7-decimal price column', () => {
    const annuity = all.find((t) => t.name === 'annuity')!;
    const stellar = accepts(config, annuity).find((e) => e.network === STELLAR_TESTNET)!;
    expect(stellar.amount).toBe(annuity.price.stellar ?? annuity.price.default);
    expect(accepts(config, annuity).find((e) => e.network === BASE_SEPOLIA)!.amount).toBe(annuity.price.default);
  });

  it('is paid on a testnet by a stock official client (x402Client with only an EVM scheme, default choice)', async () => {
    const client = new x402Client();
    client.register('eip155:*', new ExactEvmScheme(privateKeyToAccount(generatePrivateKey())));
    for (const name of ['annuity', 'token-report', 'card-validate']) {
      const challenge = buildChallenge(
        config,
        all.find((t) => t.name === name)!,
      ) as PaymentRequired;
      const payload = await client.createPaymentPayload(challenge);
      expect(payload.accepted.network, name).toBe(BASE_SEPOLIA);
    }
  });
});

describe('a replaced table holding Base Sepolia only (NETWORKS_JSON with replace: true)', () => {
  const only = { ...entry(BASE_SEPOLIA) };
  const config = loadConfig({
    ...payTo,
    LOG_LEVEL: 'silent',
    NETWORKS_JSON: JSON.stringify({ replace: true, networks: [only] }),
  });

  it('loads on the mainnet set, and every tool is paid on Base Sepolia alone', () => {
    expect(config.networks.map((n) => n.id)).toEqual([BASE_SEPOLIA]);
    for (const tool of all) {
      const networks = accepts(config, tool).map((e) => V1_NAMES[e.network] ?? e.network);
      expect(new Set(networks), tool.name).toEqual(new Set([BASE_SEPOLIA]));
    }
  });

  it('reads transfers-evm at Base Sepolia, the chain it is paid on', () => {
    expect(config.chainTools.transfers.rpc).toEqual({
      url: 'https://sepolia.base.org',
      label: 'Base Sepolia JSON-RPC',
    });
  });
});
