/**
 * A seller of POST /api/annuity built with mppx's own server side (`Mppx.create` + its EVM `charge` method), settling
 * each EIP-3009 authorization on the local chain (transferWithAuthorization sent by a key of the chain). MPP-only by
 * default: the x402 `PAYMENT-REQUIRED` header mppx adds beside its `WWW-Authenticate: Payment` challenge is removed;
 * with `alsoX402`, the seller offers both protocols, as mppx does out of the box.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Mppx } from 'mppx/server';
import { generate, type DiscoveryHandler } from 'mppx/discovery';
import { charge } from 'mppx/evm/server';
import { createPublicClient, createWalletClient, getAddress, parseAbi, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { inputJsonSchema } from '../../src/tool/tool-schema.js';
import { annuity } from '../../tools/annuity.js';
import type { BaseEnvironment } from './chain/permit2-env.js';
import { localTransport, localViemChain } from './chain/token.js';
import { testContext } from './context.js';
import { x402Document } from './x402-catalog.js';

const TRANSFER_WITH_AUTHORIZATION = parseAbi([
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
]);

/** A running MPP seller. */
export interface MppSeller {
  url: string;
  /** Requests that carried a payment (an `Authorization: Payment` credential or an x402 `PAYMENT-SIGNATURE`). */
  paidAttempts: () => number;
  /** Paid calls answered, by the protocol they were paid with (each settled on the chain first). */
  settled: { mpp: number; x402: number };
  /** Annuity calls run (after a settled payment only). */
  runs: () => number;
  close(): Promise<void>;
}

/** Options of {@link startMppSeller}. */
export interface MppSellerOptions {
  /** Price in dollars of the 6-decimal test USDC, as mppx takes it (`'0.001'`). */
  price: string;
  /** Offer x402 beside MPP (mppx's own x402 path); default false: MPP only. */
  alsoX402?: boolean;
  /** What it publishes: its catalog at `/.well-known/x402` (default), or only mppx's own discovery at `/openapi.json`. */
  discovery?: 'well-known' | 'openapi';
}

/**
 * What the seller publishes, by path: its catalog at `/.well-known/x402` (its one item, relative to the document), or
 * only mppx's own OpenAPI discovery document of its route (the offers in `x-payment-info`) at `/openapi.json`.
 */
function publications(
  mppx: Parameters<typeof generate>[0],
  handler: DiscoveryHandler,
  options: MppSellerOptions,
): Map<string, string> {
  if (options.discovery !== 'openapi') {
    const document = x402Document([{ resource: '/api/annuity', method: 'POST', name: annuity.name }]);
    return new Map([['/.well-known/x402', JSON.stringify(document)]]);
  }
  const route = {
    handler,
    method: 'post',
    path: '/api/annuity',
    summary: annuity.description,
    requestBody: { content: { 'application/json': { schema: inputJsonSchema(annuity) } } },
  };
  return new Map([['/openapi.json', JSON.stringify(generate(mppx, { routes: [route] }))]]);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** mppx's EVM charge method for the test USDC of `base`, settling each authorization on the local chain itself. */
export function localEvmCharge(base: BaseEnvironment) {
  const settler = privateKeyToAccount(base.env.FACILITATOR_EVM_PRIVATE_KEY as Hex);
  const chain = localViemChain(base.chain);
  const wallet = createWalletClient({ account: settler, chain, transport: localTransport(base.chain) });
  const reader = createPublicClient({ chain, transport: localTransport(base.chain) });
  return charge({
    currency: base.token,
    recipient: base.payTo,
    chainId: base.chain.chainId,
    decimals: 6,
    authorization: { name: 'USD Coin', version: '2' },
    async settle({ payload }) {
      const hash = await wallet.writeContract({
        address: base.token,
        abi: TRANSFER_WITH_AUTHORIZATION,
        functionName: 'transferWithAuthorization',
        args: [
          getAddress(payload.from),
          getAddress(payload.to),
          BigInt(payload.value),
          BigInt(payload.validAfter),
          BigInt(payload.validBefore),
          payload.nonce as Hex,
          payload.signature as Hex,
        ],
      });
      const receipt = await reader.waitForTransactionReceipt({ hash });
      if (receipt.status !== 'success') throw new Error(`transferWithAuthorization reverted: ${hash}`);
      return { reference: hash };
    },
  });
}

/** Starts the seller on a free port of 127.0.0.1, selling to the Base look-alike chain of `base`. */
export async function startMppSeller(base: BaseEnvironment, options: MppSellerOptions): Promise<MppSeller> {
  const settled = { mpp: 0, x402: 0 };
  let attempts = 0;
  let runs = 0;
  const method = localEvmCharge(base);
  const mppx = Mppx.create({ methods: [method], secretKey: randomBytes(32).toString('hex'), realm: 'mpp-seller.test' });
  const published = publications(mppx, mppx['evm/charge']({ amount: options.price }), options);
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${req.url ?? '/'}`;
      const document = req.method === 'GET' ? published.get(new URL(url).pathname) : undefined;
      if (document) return void res.writeHead(200, { 'content-type': 'application/json' }).end(document);
      if (req.method !== 'POST' || new URL(url).pathname !== '/api/annuity') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":"not_found"}}');
        return;
      }
      if (req.headers.authorization || req.headers['payment-signature']) attempts++;
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
      const request = new Request(url, { method: 'POST', headers, ...(body ? { body } : {}) });
      const result = await mppx['evm/charge']({ amount: options.price })(request);
      if (result.status === 402) {
        const answer = result.challenge;
        const out: Record<string, string> = {};
        answer.headers.forEach((value, key) => {
          if (key !== 'payment-required' || options.alsoX402) out[key] = value;
        });
        res.writeHead(402, out).end(await answer.text());
        return;
      }
      const input = annuity.input.safeParse(body ? JSON.parse(body) : undefined);
      if (!input.success) {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"code":"invalid_input"}}');
        return;
      }
      settled[req.headers['payment-signature'] ? 'x402' : 'mpp']++;
      runs++;
      const output = await annuity.handler(input.data, testContext());
      const answered = result.withReceipt(Response.json(output));
      const out: Record<string, string> = {};
      answered.headers.forEach((value, key) => (out[key] = value));
      res.writeHead(answered.status, out).end(await answered.text());
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'internal', message: String((err as Error)?.message ?? err) } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    paidAttempts: () => attempts,
    settled,
    runs: () => runs,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
