/**
 * The hosted Coinbase Developer Platform faucet (docs/spec-notes.md#coinbase-developer-platform-keys-and-faucet): `POST
 * /v2/evm/faucet` and `POST /v2/solana/faucet` with a per-request CDP JWT. A drip is sent at most once (never retried,
 * never joined with another request); the faucet's rolling 24-hour caps (HTTP 429 `faucet_limit_exceeded`) become 429
 * `rate_limited`, an ordinary rate limit (429 `rate_limit_exceeded`) 503 `upstream_rate_limited` with its Retry-After, its refusals of an address 400 on `address`, anything else an upstream error.
 */
import { z } from 'zod';
import { ToolError } from '../../shared/errors.js';
import type { Logger } from '../../shared/log.js';
import { cdpJwt, type CdpCredentials } from './cdp-auth.js';
import { explorerUrl, type Drip, type DripRequest, type Faucet } from './faucet.js';
import type { Upstream } from '../upstream.js';

/** The CDP error envelope (`errorType`, `errorMessage`, `correlationId`, `errorLink`). */
const CdpErrorSchema = z.object({
  errorType: z.string(),
  errorMessage: z.string().optional(),
  correlationId: z.string().optional(),
});

const EvmAnswerSchema = z.object({ transactionHash: z.string().regex(/^0x[0-9a-fA-F]{64}$/) });
const SolanaAnswerSchema = z.object({ transactionSignature: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/) });

/** The faucet's rolling 24-hour cap for this address or token (`faucet_limit_exceeded`): no retry today cures it. */
function faucetCapError(type: string): ToolError {
  return new ToolError(
    'rate_limited',
    `The CDP faucet's own rolling 24-hour cap for this address or token is reached (${type}). Try again tomorrow or ask for another token.`,
    { details: { provider: 'cdp' } },
  );
}

/** An ordinary rate limit (`rate_limit_exceeded`, or a 429 without the faucet's cap type): retry shortly. */
function rateLimitError(type: string, retryAfterSeconds?: number): ToolError {
  const when = retryAfterSeconds === undefined ? 'in a minute' : `in ${Math.max(1, retryAfterSeconds)} s`;
  return new ToolError(
    'upstream_rate_limited',
    `The CDP faucet is rate-limiting requests right now (${type}). Try again ${when}.`,
    { details: { provider: 'cdp', ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }) } },
  );
}

/** The error a 429 answer becomes: the 24-hour cap when its body says so, else undefined (an ordinary rate limit). */
export function interpretCdpRateLimit(json: unknown): ToolError | undefined {
  const envelope = CdpErrorSchema.safeParse(json);
  return envelope.success && envelope.data.errorType === 'faucet_limit_exceeded'
    ? faucetCapError(envelope.data.errorType)
    : undefined;
}

/** Maps a CDP answer that is not a drip (4xx other than 429) to the error the caller sees. */
export function interpretCdpFaucetAnswer(status: number, json: unknown, log: Logger): ToolError | undefined {
  if (status < 400 || status >= 500) return undefined;
  const envelope = CdpErrorSchema.safeParse(json);
  // The error type is a code; the faucet's message is logged, never quoted to the caller.
  const type =
    envelope.success && /^[a-z_]{1,64}$/.test(envelope.data.errorType) ? envelope.data.errorType : `HTTP ${status}`;
  if (envelope.success && envelope.data.errorMessage)
    log.warn('the CDP faucet refused a drip', { status, errorType: type, errorMessage: envelope.data.errorMessage });
  if (type === 'faucet_limit_exceeded') return faucetCapError(type);
  if (/limit/i.test(type)) return rateLimitError(type);
  if (status === 401) {
    log.error('the CDP faucet refused our API key', {
      status,
      errorType: type,
      correlationId: envelope.data?.correlationId,
    });
    return new ToolError(
      'upstream_unavailable',
      `The CDP faucet refused this server's credentials; the operator has to fix them. Try again later.`,
    );
  }
  if (status === 400 || status === 403) {
    return new ToolError(
      'invalid_input',
      `The CDP faucet refused to send to this address (${type}). Check the address and network.`,
      {
        field: 'address',
      },
    );
  }
  return new ToolError('upstream_unavailable', `The CDP faucet refused the request (${type}). Try again later.`);
}

/** The hosted faucet as a {@link Faucet}; `credentials` sign one JWT per drip. */
export function createCdpFaucet(upstream: Upstream, credentials: CdpCredentials, log: Logger): Faucet {
  const base = upstream.info.baseUrl;
  const post = async <S extends z.ZodType>(path: string, body: unknown, schema: S, signal: AbortSignal) => {
    const jwt = cdpJwt(credentials, 'POST', `${base}${path}`);
    try {
      const { data } = await upstream.request({
        method: 'POST',
        path,
        body,
        schema,
        once: true,
        signal,
        headers: { authorization: `Bearer ${jwt}` },
        interpret: (status, json) => interpretCdpFaucetAnswer(status, json, log),
        rateLimited: interpretCdpRateLimit,
      });
      return data;
    } catch (err) {
      if (err instanceof ToolError && err.code === 'upstream_rate_limited') {
        const seconds = err.details?.retryAfterSeconds;
        throw rateLimitError('HTTP 429', typeof seconds === 'number' ? seconds : undefined);
      }
      throw err;
    }
  };
  return {
    name: 'cdp',
    async drip({ network, token, address }: DripRequest, signal: AbortSignal): Promise<Drip> {
      if (network === 'base-sepolia') {
        const { transactionHash } = await post('/v2/evm/faucet', { network, address, token }, EvmAnswerSchema, signal);
        return { transactionHash, explorer: explorerUrl(network, transactionHash) };
      }
      const { transactionSignature } = await post('/v2/solana/faucet', { address, token }, SolanaAnswerSchema, signal);
      return { transactionHash: transactionSignature, explorer: explorerUrl(network, transactionSignature) };
    },
  };
}
