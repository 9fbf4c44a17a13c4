/**
 * The values the agent's two remote transports share (HTTP to the deployment, tools/call to its MCP endpoint): the
 * request, the answer, a signed payment, and the reading of an x402 challenge and of an error answer. Neither
 * transport imports the other.
 */
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { z } from 'zod';
import { problemCode, type MppCredential, type MppOffer, type MppReceipt } from './mpp.js';

/** A signed payment on its way: an x402 payload, or an MPP credential. */
export type SignedPayment = { protocol: 'x402'; payload: PaymentPayload } | MppCredential;

/** The payment as kept with a spend (x402 payloads as they are, so older stores still resume). */
export function storedForm(payment: SignedPayment): unknown {
  return payment.protocol === 'x402' ? payment.payload : payment;
}

/** A kept payment read back (see {@link storedForm}). */
export function fromStored(stored: unknown): SignedPayment {
  return (stored as { protocol?: unknown }).protocol === 'mpp'
    ? (stored as MppCredential)
    : { protocol: 'x402', payload: stored as PaymentPayload };
}

/** A paid challenge as received (either version); entries are kept exactly as sent, since payments echo them. */
export interface RemoteChallenge {
  x402Version: 1 | 2;
  error?: string;
  accepts: PaymentRequirements[];
  resource?: unknown;
  extensions?: Record<string, unknown>;
  [key: string]: unknown;
}

/** One HTTP request to the remote deployment (or, with `mcp`, one tools/call to its MCP endpoint at `url`). */
export interface RemoteRequest {
  url: string;
  /** GET or POST for a tool; any method for `tollbooth fetch`. */
  method: string;
  /** JSON body of a POST (undefined for GET); for `tollbooth fetch`, the body as given. */
  body?: string;
  /** Extra headers (`tollbooth fetch -H`), names in lower case; they replace the default accept and content-type. */
  headers?: Record<string, string>;
  /** Set when the remote is an MCP endpoint: the tool and its arguments. */
  mcp?: { tool: string; args: unknown };
}

/** What the remote answered. */
export type RemoteAnswer =
  | { type: 'ok'; status: number; body: unknown; receipt?: SettleResponse; mppReceipt?: MppReceipt }
  /**
   * 402 (or 412): a challenge, x402 (`challenge`), MPP (`mpp`: the `WWW-Authenticate: Payment` offers) or both;
   * `receipt` is present when a settlement was attempted and failed. Sent with `readMpp: false`, an HTTP answer keeps
   * the `WWW-Authenticate: Payment` value unread in `mppHeader` (reading it loads mppx) and `mpp` stays empty.
   */
  | {
      type: 'challenge';
      status: number;
      challenge?: RemoteChallenge;
      mpp: MppOffer[];
      mppHeader?: string;
      body: unknown;
      receipt?: SettleResponse;
    }
  | { type: 'error'; status: number; body: unknown; retryAfterSeconds?: number; receipt?: SettleResponse }
  /** No (complete) answer: refused connection, dropped connection, time limit. The request may or may not have been handled. */
  | { type: 'no_answer'; message: string; timedOut: boolean };

const EntrySchema = z
  .object({
    scheme: z.string().min(1),
    network: z.string().min(1),
    asset: z.string().min(1),
    payTo: z.string().min(1),
    amount: z.string().regex(/^\d+$/).optional(),
    maxAmountRequired: z.string().regex(/^\d+$/).optional(),
  })
  .passthrough()
  .refine(
    (e) => e.amount !== undefined || e.maxAmountRequired !== undefined,
    'an entry needs amount or maxAmountRequired',
  );

const ChallengeSchema = z
  .object({
    x402Version: z.union([z.literal(1), z.literal(2)]),
    accepts: z.array(EntrySchema).min(1),
    extensions: z.record(z.string(), z.unknown()).optional(),
  })
  .passthrough();

/** Reads a challenge from a 402's `PAYMENT-REQUIRED` header (version 2) or its JSON body (version 1); undefined when neither is one. */
export function readChallenge(header: string | null, body: unknown): RemoteChallenge | undefined {
  let candidate: unknown = body;
  if (header) {
    try {
      candidate = decodePaymentRequiredHeader(header);
    } catch {
      candidate = body;
    }
  }
  return ChallengeSchema.safeParse(candidate).success ? (candidate as RemoteChallenge) : undefined;
}

/**
 * The remote's error code, if any: `{error: {code}}` or a challenge's `error`; for an MPP refusal (Problem Details),
 * its `reason` when the server adds one (ours does: the same codes as x402), else the problem type's last segment.
 */
export function remoteCode(body: unknown): string | undefined {
  const error = (body as { error?: unknown } | null)?.error;
  if (typeof error === 'string') return error;
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') return code;
  const reason = (body as { reason?: unknown } | null)?.reason;
  return typeof reason === 'string' ? reason : problemCode(body);
}

/** The first line of an error answer's message, as `: <message>` (empty when it has none). */
export function remoteMessage(body: unknown): string {
  const b = body as { message?: unknown; error?: { message?: unknown } } | null;
  const detail = (body as { detail?: unknown } | null)?.detail;
  const message =
    typeof b?.message === 'string'
      ? b.message
      : typeof b?.error?.message === 'string'
        ? b.error.message
        : typeof detail === 'string'
          ? detail
          : '';
  return message ? `: ${message.split('\n', 1)[0]!.slice(0, 300)}` : '';
}
