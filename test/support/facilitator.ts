import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { x402Facilitator } from '@x402/core/facilitator';
import { SettleError, VerifyError, type PaymentPayload, type PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import type { Address, Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createEvmFacilitatorSigner } from '../../src/payments/rails/evm/chain.js';
import { localViemChain } from './chain/token.js';

/**
 * How an endpoint of the look-alike answers:
 * - `ok`: the real official facilitator answers;
 * - `hang`: the request is accepted and never answered (until `close()`);
 * - `garbage`: 200 with a body that is not JSON;
 * - `http500`: 500 with a JSON error body, as a crashing facilitator would.
 */
export type EndpointMode = 'ok' | 'hang' | 'garbage' | 'http500' | 'work-then-hang';

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

/** A fixed answer an endpoint gives instead of the real facilitator's (e.g. an error body echoing a credential). */
export interface FixedAnswer {
  status: number;
  body: unknown;
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
  setRewrite(rewrite: ((kind: 'verify' | 'settle', answer: Record<string, unknown>) => unknown) | undefined): void;
  /** Answers `/verify` and/or `/settle` with a fixed answer from now on (undefined: the mode's answer again). */
  setAnswer(answers: { verify?: FixedAnswer | undefined; settle?: FixedAnswer | undefined }): void;
  /** Stops the server, destroying every open (including hanging) connection. */
  close(): Promise<void>;
}

interface FacilitatorRequestBody {
  x402Version?: unknown;
  paymentPayload?: PaymentPayload;
  paymentRequirements?: PaymentRequirements;
}

function facilitatorSigner(opts: LookalikeOptions) {
  const chain = localViemChain({ chainId: opts.chainId, rpcUrl: opts.rpcUrl }, 'Look-alike facilitator chain');
  const signer = createEvmFacilitatorSigner(opts.privateKey, chain, opts.rpcUrl, 30_000);
  return { signer, address: privateKeyToAccount(opts.privateKey).address };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<FacilitatorRequestBody | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return typeof parsed === 'object' && parsed !== null ? (parsed as FacilitatorRequestBody) : undefined;
  } catch {
    return undefined;
  }
}

/** Closes each connection after `ms` without a request running, announcing nothing (no Keep-Alive header). */
function closeIdle(server: Server, ms: number): void {
  server.keepAliveTimeout = 0;
  const timers = new WeakMap<Socket, NodeJS.Timeout>();
  const idle = (socket: Socket) => {
    clearTimeout(timers.get(socket));
    timers.set(
      socket,
      setTimeout(() => socket.destroy(), ms),
    );
  };
  server.on('connection', idle);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    clearTimeout(timers.get(req.socket));
    res.once('finish', () => idle(req.socket));
  });
}

/**
 * Starts a facilitator that speaks the standard HTTP API (`POST /verify`, `POST /settle`, `GET /supported`)
 * on 127.0.0.1 at a free port. In `ok` mode the official `x402Facilitator` with the EVM `exact` scheme verifies
 * and settles on the given chain; the other modes simulate an outage or a broken facilitator.
 */
export async function startLookalikeFacilitator(opts: LookalikeOptions): Promise<LookalikeFacilitator> {
  const { signer, address } = facilitatorSigner(opts);
  const facilitator = new x402Facilitator().register(opts.network as `${string}:${string}`, new ExactEvmScheme(signer));
  const modes: { verify: EndpointMode; settle: EndpointMode } = { verify: 'ok', settle: 'ok' };
  const calls = { verify: 0, settle: 0, supported: 0 };
  const abandoned = { verify: 0, settle: 0 };
  const sockets = new Set<Socket>();
  const fixed: { verify?: FixedAnswer | undefined; settle?: FixedAnswer | undefined } = {};
  let rewrite: ((kind: 'verify' | 'settle', answer: Record<string, unknown>) => unknown) | undefined;

  async function answer(kind: 'verify' | 'settle', req: IncomingMessage, res: ServerResponse): Promise<void> {
    calls[kind]++;
    res.once('close', () => void (res.writableFinished || abandoned[kind]++));
    const body = await readJson(req);
    const given = fixed[kind];
    if (given) return sendJson(res, given.status, given.body);
    switch (modes[kind]) {
      case 'hang':
        return; // never answered; close() destroys the socket
      case 'garbage':
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html><body>502 Bad Gateway (upstream sent nonsense)</body></html>');
        return;
      case 'http500':
        sendJson(res, 500, { error: 'internal_error', message: `the facilitator crashed while handling ${kind}` });
        return;
      case 'ok':
      case 'work-then-hang':
        break;
    }
    if (!body?.paymentPayload || !body.paymentRequirements) {
      sendJson(res, 400, {
        error: 'invalid_request',
        message: 'expected { x402Version, paymentPayload, paymentRequirements }',
      });
      return;
    }
    try {
      const result =
        kind === 'verify'
          ? await facilitator.verify(body.paymentPayload, body.paymentRequirements)
          : await facilitator.settle(body.paymentPayload, body.paymentRequirements);
      if (modes[kind] === 'work-then-hang') return; // did the work (on chain for settle), never answers
      sendJson(res, 200, rewrite ? rewrite(kind, result as unknown as Record<string, unknown>) : result);
    } catch (err) {
      if (err instanceof VerifyError) {
        sendJson(res, err.statusCode, {
          isValid: false,
          invalidReason: err.invalidReason,
          invalidMessage: err.invalidMessage,
          payer: err.payer,
        });
      } else if (err instanceof SettleError) {
        sendJson(res, err.statusCode, {
          success: false,
          errorReason: err.errorReason,
          errorMessage: err.errorMessage,
          payer: err.payer,
          transaction: err.transaction,
          network: err.network,
        });
      } else {
        sendJson(res, 500, { error: 'internal_error', message: (err as Error).message });
      }
    }
  }

  let refused = 0;
  const basePath = opts.basePath ?? '';
  const server = createServer((req, res) => {
    const fullPath = (req.url ?? '/').split('?')[0]!;
    const denied = opts.authorize?.({
      method: req.method ?? '',
      host: req.headers.host ?? '',
      path: fullPath,
      headers: req.headers,
    });
    if (denied !== undefined) {
      refused++;
      req.resume();
      sendJson(res, 401, { errorType: 'unauthorized', errorMessage: denied });
      return;
    }
    const path = fullPath.startsWith(`${basePath}/`) ? fullPath.slice(basePath.length) : undefined;
    if (req.method === 'POST' && (path === '/verify' || path === '/settle')) {
      answer(path === '/verify' ? 'verify' : 'settle', req, res).catch((err: unknown) => {
        if (!res.headersSent && !res.destroyed) sendJson(res, 500, { error: 'internal_error', message: String(err) });
      });
      return;
    }
    if (req.method === 'GET' && path === '/supported') {
      calls.supported++;
      sendJson(res, 200, {
        kinds: opts.kinds ?? [{ x402Version: 2, scheme: 'exact', network: opts.network }],
        extensions: [],
        signers: { 'eip155:*': [address] },
      });
      return;
    }
    sendJson(res, 404, { error: 'not_found' });
  });
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

  return {
    url: `http://127.0.0.1:${port}${basePath}`,
    address,
    calls,
    abandoned,
    get refused() {
      return refused;
    },
    setRewrite(given) {
      rewrite = given;
    },
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
