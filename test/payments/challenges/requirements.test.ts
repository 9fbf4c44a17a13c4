import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paidTools as tools } from '../../../tools/index.js';
import { decodeHeader, startTestServer, type TestServer } from '../../support/server.js';

// The specification's tables (spec §2.1, §4.1, upstream-apis §11), written out independently of the code.
const PAY_TO = {
  evm: '0x1111111111111111111111111111111111111111',
  svm: 'FzzcmrPGHCwHy6XfqKQybLLMCFhgX7R33axfwNwzrxbw',
  stellar: 'GDPN5XW633PN5XW633PN5XW633PN5XW633PN5XW633PN5XW633PN5MZU',
  algorand: '33PN5XW633PN5XW633PN5XW633PN5XW633PN5XW633PN5XW633PMWXSJFI',
};
const FEE_PAYER_SVM = 'JAQ5MVHbCkSYRzXunsrNuM2m1LS859PGveHfoYPAmcvZ';
const FEE_PAYER_ALGO = '737P57X6737P57X6737P57X6737P57X6737P57X6737P57X6737JO4454Y';
const UPTO_FACILITATOR = '0x2222222222222222222222222222222222222222';
const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const SOLANA = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';

const PRICES: Record<string, [string, string, string]> = {
  'crypto-indicators': ['5000', '6000', '50000'],
  'development-indicator': ['10000', '11000', '100000'],
  stablecoins: ['3000', '4000', '30000'],
  'perp-klines': ['1000', '2000', '10000'],
  'testnet-fund': ['1000', '2000', '10000'],
  'venue-event': ['2000', '3000', '20000'],
  'wallet-readiness': ['50000', '51000', '500000'],
  'dex-top-pools': ['1000', '2000', '10000'],
  annuity: ['1000', '2000', '10000'],
  'solidity-scan': ['10000', '11000', '100000'],
  'password-strength': ['1000', '2000', '10000'],
  'geo-distance': ['1000', '2000', '10000'],
  'card-validate': ['1000', '2000', '10000'],
};

type Col = 0 | 1 | 2;
const EVM_EXACT: Array<[string, string, string, string, Col]> = [
  ['eip155:8453', BASE_USDC, 'USD Coin', '2', 0],
  ['eip155:137', '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359', 'USD Coin', '2', 0],
  ['eip155:42161', '0xaf88d065e77c8cC2239327C5EDb3A432268e5831', 'USD Coin', '2', 0],
  ['eip155:143', '0x754704Bc059F8C67012fEd69BC8A327a5aafb603', 'USDC', '2', 0],
  ['eip155:43114', '0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E', 'USD Coin', '2', 0],
  ['eip155:1329', '0xe15fC38F6D8c56aF07bbCBe3BAf5708A2Bf42392', 'USDC', '2', 0],
  ['eip155:10', '0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85', 'USD Coin', '2', 1],
  ['eip155:4663', '0x5fc5360D0400a0Fd4f2af552ADD042D716F1d168', 'Global Dollar', '1', 0],
  ['eip155:42220', '0xcebA9300f2b948710d2653dD7B07f33A8B32118C', 'USDC', '2', 0],
];

function expectedToolsAccepts(prices: [string, string, string]) {
  return [
    ...EVM_EXACT.map(([network, asset, name, version, col]) => ({
      scheme: 'exact',
      network,
      asset,
      amount: prices[col],
      payTo: PAY_TO.evm,
      maxTimeoutSeconds: 300,
      extra: { name, version },
    })),
    {
      scheme: 'upto',
      network: 'eip155:8453',
      asset: BASE_USDC,
      amount: prices[0],
      payTo: PAY_TO.evm,
      maxTimeoutSeconds: 300,
      extra: { name: 'USD Coin', version: '2', facilitatorAddress: UPTO_FACILITATOR, assetTransferMethod: 'permit2' },
    },
    {
      scheme: 'exact',
      network: SOLANA,
      asset: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
      amount: prices[0],
      payTo: PAY_TO.svm,
      maxTimeoutSeconds: 300,
      extra: { feePayer: FEE_PAYER_SVM },
    },
    {
      scheme: 'exact',
      network: 'stellar:pubnet',
      asset: 'CCW67TSZV3SSS2HXMBQ5JFGCKJNXKZM7UQUWUZPUTHXSTZLEO7SJMI75',
      amount: prices[2],
      payTo: PAY_TO.stellar,
      maxTimeoutSeconds: 300,
      extra: { areFeesSponsored: true },
    },
    {
      scheme: 'exact',
      network: 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73ktiC1qzkkit8=',
      asset: '31566704',
      amount: prices[0],
      payTo: PAY_TO.algorand,
      maxTimeoutSeconds: 300,
      extra: { feePayer: FEE_PAYER_ALGO, tag: 'tollbooth' },
    },
  ];
}

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ PAY_TO_EVM: PAY_TO.evm, FACILITATOR_EVM_ADDRESS: UPTO_FACILITATOR });
});
afterAll(() => server.close());

async function probe(method: string, path: string) {
  const res = await fetch(server.url + path, { method });
  return { res, body: (await res.json()) as Record<string, any> };
}

const find = (name: string) => {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool;
};

describe('the x402 challenge of every endpoint', () => {
  for (const [name, prices] of Object.entries(PRICES)) {
    it(`${name} answers a bare probe with the 13 tools-group entries of the specification`, async () => {
      const tool = find(name);
      const { res, body } = await probe(tool.method, tool.path);
      expect(res.status).toBe(402);
      expect(res.headers.get('cache-control')).toBe('no-store');
      const header = decodeHeader(res.headers.get('payment-required')) as Record<string, any>;
      expect(body).toEqual(header);
      expect(header.x402Version).toBe(2);
      expect(header.error).toBe('Payment required');
      expect(header.resource.url).toBe(
        `${server.url.replace('127.0.0.1', 'localhost').replace(/:\d+$/, ':4021')}${tool.path}`,
      );
      expect(header.accepts).toEqual(expectedToolsAccepts(prices));
      expect(header.extensions['payment-identifier'].info).toEqual({ required: false });
      const pid = header.extensions['payment-identifier'].schema.properties.id;
      expect(pid).toMatchObject({ minLength: 16, maxLength: 128, pattern: '^[a-zA-Z0-9_-]+$' });
      const bc = header.extensions['builder-code'].schema;
      expect(bc.additionalProperties).toBe(false);
      expect(Object.keys(bc.properties).sort()).toEqual(['a', 's', 'w']);
      expect(bc.properties.s.maxItems).toBe(11);
      for (const key of ['a', 'w']) expect(bc.properties[key].pattern).toBe('^[a-z0-9_]{1,32}$');
      expect(bc.properties.s.items.pattern).toBe('^[a-z0-9_]{1,32}$');
      const input = header.extensions.bazaar.info.input;
      expect(input.type).toBe('http');
      expect(input.method).toBe(tool.method);
      if (tool.method === 'POST') {
        expect(Object.keys(input).sort()).toEqual(['body', 'bodyType', 'method', 'type']);
        expect(input.bodyType).toBe('json');
        expect(header.extensions.bazaar.schema.properties.input.additionalProperties).toBe(false);
      }
    });
  }

  it('token-report offers exact on Base and Solana at 150000 each', async () => {
    const { res, body } = await probe('GET', '/report');
    expect(res.status).toBe(402);
    expect(decodeHeader(res.headers.get('payment-required'))).toEqual(body);
    expect(body.x402Version).toBe(2);
    expect(body.accepts).toEqual([
      {
        scheme: 'exact',
        network: 'eip155:8453',
        asset: BASE_USDC,
        amount: '150000',
        payTo: PAY_TO.evm,
        maxTimeoutSeconds: 300,
        extra: { name: 'USD Coin', version: '2' },
      },
      {
        scheme: 'exact',
        network: SOLANA,
        asset: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
        amount: '150000',
        payTo: PAY_TO.svm,
        maxTimeoutSeconds: 300,
        extra: { feePayer: FEE_PAYER_SVM },
      },
    ]);
  });

  it('smm-order offers one v2 entry on `base` with both amount fields and its descriptors', async () => {
    const { res, body } = await probe('POST', '/smm/v1/smm-order');
    expect(res.status).toBe(402);
    expect(body.x402Version).toBe(2);
    expect(body.accepts).toHaveLength(1);
    const [entry] = body.accepts;
    expect(entry).toMatchObject({
      scheme: 'exact',
      network: 'base',
      asset: BASE_USDC,
      amount: '3000000',
      maxAmountRequired: '3000000',
      payTo: PAY_TO.evm,
      maxTimeoutSeconds: 300,
      mimeType: 'application/json',
      resource: expect.stringMatching(/\/smm\/v1\/smm-order$/),
      description: expect.any(String),
      extra: { name: 'USD Coin', version: '2', label: expect.any(String) },
    });
    expect(Object.keys(entry.outputSchema.input.bodyFields).sort()).toEqual(['link', 'quantity', 'serviceId']);
    expect(entry.outputSchema.output.properties).toHaveProperty('orderId');
  });

  it('transfers-evm answers with a version-1 JSON body and no v2 header', async () => {
    const { res, body } = await probe('GET', '/api/transfers/evm');
    expect(res.status).toBe(402);
    expect(res.headers.get('payment-required')).toBeNull();
    expect(Object.keys(body).sort()).toEqual(['accepts', 'error', 'x402Version']);
    expect(body.x402Version).toBe(1);
    expect(body.accepts).toEqual([
      {
        scheme: 'exact',
        network: 'base',
        maxAmountRequired: '1000',
        asset: BASE_USDC,
        payTo: PAY_TO.evm,
        resource: expect.stringMatching(/^http:\/\/localhost:4021\/api\/transfers\/evm$/),
        description: expect.any(String),
        mimeType: '',
        outputSchema: { input: { type: 'http', method: 'GET', discoverable: true } },
        maxTimeoutSeconds: 60,
        extra: { name: 'USD Coin', version: '2' },
      },
    ]);
  });

  it('lets browsers read the payment headers (CORS)', async () => {
    const res = await fetch(server.url + '/api/annuity', { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-expose-headers')).toMatch(/PAYMENT-REQUIRED/);
    expect(res.headers.get('access-control-expose-headers')).toMatch(/PAYMENT-RESPONSE/);
    expect(res.headers.get('access-control-allow-headers')).toMatch(/PAYMENT-SIGNATURE/);
    expect(res.headers.get('access-control-allow-headers')).toMatch(/X-PAYMENT/);
  });

  it('uses the configured base URL of each group in resource URLs', async () => {
    const other = await startTestServer({
      BASE_URL_TOOLS: 'https://tools.example.com',
      BASE_URL_TOKEN: 'https://token.example.com',
      BASE_URL_SMM: 'https://smm.example.com',
      BASE_URL_TRANSFERS: 'https://tx.example.com',
    });
    try {
      const urls = await Promise.all(
        [
          ['POST', '/api/annuity'],
          ['GET', '/report'],
          ['POST', '/smm/v1/smm-order'],
          ['GET', '/api/transfers/evm'],
        ].map(async ([m, p]) => {
          const body = (await (await fetch(other.url + p, { method: m })).json()) as Record<string, any>;
          return body.resource?.url ?? body.accepts[0].resource;
        }),
      );
      expect(urls).toEqual([
        'https://tools.example.com/api/annuity',
        'https://token.example.com/report',
        'https://smm.example.com/smm/v1/smm-order',
        'https://tx.example.com/api/transfers/evm',
      ]);
    } finally {
      await other.close();
    }
  });
});
