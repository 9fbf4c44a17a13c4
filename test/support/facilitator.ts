import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { x402Facilitator } from '@x402/core/facilitator';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import type { Address, Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createEvmFacilitatorSigner } from '../../src/payments/rails/evm/chain.js';
import { localViemChain } from './chain/token.js';
import {
  answerEndpoint,
  closeIdle,
  sendJson,
  type EndpointMode,
  type EndpointState,
  type FixedAnswer,
  type PaymentEndpoint,
} from './facilitator-endpoints.js';

export type { EndpointMode, FixedAnswer } from './facilitator-endpoints.js';

/** Options for {@link startLookalikeFacilitator}. */
export interface LookalikeOptions {
  rpcUrl: string;
  chainId: number;
  /** The facilitator's settlement key; it pays gas and submits `transferWithAuthorization`. */
  privateKey: Hex;
  /** CAIP-2 id served, e.g. `eip155:84532`. */
  network: string;
  /** Path the three endpoints live under, e.g. `/platform/v2/x402` (default: the root). */
  basePath?: string;
  /** What `/supported` lists (default: `exact` version 2 on `network`). */
  kinds?: Array<{ x402Version: number; scheme: string; network: string }>;
  /**
   * Checks each request's credentials before anything else; a returned reason is answered 401 with it in the body,
   * as a facilitator that needs an API key does.
   */
  authorize?: (request: {
    method: string;
    host: string;
    path: string;
    headers: IncomingHttpHeaders;
  }) => string | undefined;
  /** The server's keep-alive timeout (Node announces it as `Keep-Alive: timeout=N`); Node's default is 5 s. */
  keepAliveMs?: number;
  /** Closes a connection after this long idle, announcing no Keep-Alive (the server's own timeout is off). */
  idleCloseMs?: number;
}

/** A standard x402 facilitator over HTTP, backed by the official `x402Facilitator`, with failure injection. */
export interface LookalikeFacilitator {
  /** Base URL with `basePath`, e.g. `http://127.0.0.1:54321` (no trailing slash). */
  url: string;
  /** The facilitator signer's address (what `FACILITATOR_EVM_ADDRESS` should be). */
  address: Address;
  /** Requests received per endpoint, whatever the mode answered. */
  calls: { verify: number; settle: number; supported: number };
  /** Requests received per endpoint whose caller closed the connection before any answer (e.g. its timeout fired). */
  abandoned: { verify: number; settle: number };
  /** Requests refused with 401 by `authorize`. */
  readonly refused: number;
  /** Switches how `/verify` and/or `/settle` answer from now on; omitted endpoints keep their mode. */
  setMode(mode: { verify?: EndpointMode; settle?: EndpointMode }): void;
  /** Rewrites the real facilitator's answers from now on (e.g. another payer); undefined: unchanged again. */
  setRewrite(rewrite: ((kind: PaymentEndpoint, answer: Record<string, unknown>) => unknown) | undefined): void;
  /** Answers `/verify` and/or `/settle` with a fixed answer from now on (undefined: the mode's answer again). */
  setAnswer(answers: { verify?: FixedAnswer | undefined; settle?: FixedAnswer | undefined }): void;
  /** Stops the server, destroying every open (including hanging) connection. */
  close(): Promise<void>;
}

function facilitatorSigner(opts: LookalikeOptions) {
  const chain = localViemChain({ chainId: opts.chainId, rpcUrl: opts.rpcUrl }, 'Look-alike facilitator chain');
  const signer = createEvmFacilitatorSigner(opts.privateKey, chain, opts.rpcUrl, 30_000);
  return { signer, address: privateKeyToAccount(opts.privateKey).address };
}

/**
 * Starts a facilitator that speaks the standard HTTP API (`POST /verify`, `POST /settle`, `GET /supported`)
 * on 127.0.0.1 at a free port. In `ok` mode the official `x402Facilitator` with the EVM `exact` scheme verifies
 * and settles on the given chain; the other modes simulate an outage or a broken facilitator.
 */
export async function startLookalikeFacilitator(opts: LookalikeOptions): Promise<LookalikeFacilitator> {
  const { signer, address } = facilitatorSigner(opts);
  const state: EndpointState = {
    facilitator: new x402Facilitator().register(opts.network as `${string}:${string}`, new ExactEvmScheme(signer)),
    modes: { verify: 'ok', settle: 'ok' },
    calls: { verify: 0, settle: 0, supported: 0 },
    abandoned: { verify: 0, settle: 0 },
    fixed: {},
    rewrite: undefined,
    refused: 0,
  };
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => route(state, opts, address, req, res));
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  if (opts.keepAliveMs !== undefined) server.keepAliveTimeout = opts.keepAliveMs;
  if (opts.idleCloseMs !== undefined) closeIdle(server, opts.idleCloseMs);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const { calls, abandoned, fixed, modes } = state;
  return {
    url: `http://127.0.0.1:${port}${opts.basePath ?? ''}`,
    address,
    calls,
    abandoned,
    get refused() {
      return state.refused;
    },
    setRewrite: (given) => void (state.rewrite = given),
    setAnswer(answers) {
      if ('verify' in answers) fixed.verify = answers.verify;
      if ('settle' in answers) fixed.settle = answers.settle;
    },
    setMode(mode) {
      if (mode.verify) modes.verify = mode.verify;
      if (mode.settle) modes.settle = mode.settle;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        for (const socket of sockets) socket.destroy();
      }),
  };
}

/** Routes one request: credentials first (`authorize`), then `/verify`, `/settle` and `/supported` under `basePath`. */
function route(
  state: EndpointState,
  opts: LookalikeOptions,
  address: Address,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  const basePath = opts.basePath ?? '';
  const fullPath = (req.url ?? '/').split('?')[0]!;
  const denied = opts.authorize?.({
    method: req.method ?? '',
    host: req.headers.host ?? '',
    path: fullPath,
    headers: req.headers,
  });
  if (denied !== undefined) {
    state.refused++;
    req.resume();
    return sendJson(res, 401, { errorType: 'unauthorized', errorMessage: denied });
  }
  const path = fullPath.startsWith(`${basePath}/`) ? fullPath.slice(basePath.length) : undefined;
  if (req.method === 'POST' && (path === '/verify' || path === '/settle')) {
    answerEndpoint(state, path === '/verify' ? 'verify' : 'settle', req, res).catch((err: unknown) => {
      if (!res.headersSent && !res.destroyed) sendJson(res, 500, { error: 'internal_error', message: String(err) });
    });
    return;
  }
  if (req.method === 'GET' && path === '/supported') {
    state.calls.supported++;
    return sendJson(res, 200, {
      kinds: opts.kinds ?? [{ x402Version: 2, scheme: 'exact', network: opts.network }],
      extensions: [],
      signers: { 'eip155:*': [address] },
    });
  }
  sendJson(res, 404, { error: 'not_found' });
}

/**
 * Moves a paid environment's settlement key to a look-alike facilitator: returns it and the server environment that
 * settles through it (FACILITATOR_URL, FACILITATOR_EVM_ADDRESS), so Tollbooth only learns what the facilitator answers.
 */
export async function lookalikeFor(
  paid: { env: Record<string, string>; chain: { rpcUrl: string; chainId: number } },
  network: string,
  options: Partial<LookalikeOptions> = {},
): Promise<{ facilitator: LookalikeFacilitator; serverEnv: Record<string, string> }> {
  const { FACILITATOR_EVM_PRIVATE_KEY: key, ...rest } = paid.env;
  if (!key) throw new Error('the paid environment has no facilitator key');
  const facilitator = await startLookalikeFacilitator({
    rpcUrl: paid.chain.rpcUrl,
    chainId: paid.chain.chainId,
    privateKey: key as Hex,
    network,
    ...options,
  });
  const serverEnv = { ...rest, FACILITATOR_URL: facilitator.url, FACILITATOR_EVM_ADDRESS: facilitator.address };
  return { facilitator, serverEnv };
}
