/**
 * Coinbase Onramp links (docs/spec-notes.md#coinbase-onramp). Since 2025-07-31 a link needs a server-minted, single-use
 * session token, so a link is made with the v2 session API (`POST /v2/onramp/sessions`, CDP JWT), which returns a ready
 * `onrampUrl` (`https://pay.coinbase.com/buy?sessionToken=…`, valid about five minutes). Without a CDP API key no link
 * can be made, and the provider says so.
 */
import { z } from 'zod';
import { ToolError } from '../../shared/errors.js';
import { cdpJwt, type CdpCredentials } from './cdp-auth.js';
import type { Upstream } from '../upstream.js';

/** A buy link for USDC on Base into one wallet. */
export interface OnrampLink {
  url: string;
  provider: string;
  network: string;
  asset: string;
  /** How long the link's session token stays usable (it is single-use). */
  expiresInSeconds: number;
}

/** Makes onramp links. */
export interface OnrampProvider {
  /** Whether links can be made (a CDP API key is configured). */
  readonly configured: boolean;
  link(address: string, signal: AbortSignal): Promise<OnrampLink>;
}

const SessionSchema = z.object({
  session: z.object({
    onrampUrl: z
      .string()
      .url()
      .refine((u) => /sessionToken=/.test(u), 'must carry a sessionToken'),
  }),
});

const CdpErrorSchema = z.object({ errorType: z.string(), errorMessage: z.string().optional() });

/** Creates the onramp provider; without credentials every link request fails with a reason. */
export function createOnrampProvider(upstream: Upstream, credentials: CdpCredentials | undefined): OnrampProvider {
  const path = '/v2/onramp/sessions';
  return {
    configured: credentials !== undefined,
    async link(address, signal) {
      if (!credentials) {
        throw new ToolError(
          'not_implemented',
          'No onramp link: the onramp needs a server-minted session token and this server has no CDP API key (CDP_API_KEY_ID / CDP_API_KEY_SECRET).',
        );
      }
      const jwt = cdpJwt(credentials, 'POST', `${upstream.info.baseUrl}${path}`);
      const { data } = await upstream.request({
        method: 'POST',
        path,
        body: { purchaseCurrency: 'USDC', destinationNetwork: 'base', destinationAddress: address },
        schema: SessionSchema,
        once: true,
        signal,
        headers: { authorization: `Bearer ${jwt}` },
        interpret: (status, json) => {
          if (status < 400 || status >= 500) return undefined;
          const envelope = CdpErrorSchema.safeParse(json);
          // The error type is a code; the message is never quoted to the caller (it may echo internals).
          const why =
            envelope.success && /^[a-z_]{1,64}$/.test(envelope.data.errorType)
              ? envelope.data.errorType
              : `HTTP ${status}`;
          return new ToolError(
            'upstream_unavailable',
            `The ${upstream.info.label} refused to create a session (${why}).`,
          );
        },
      });
      return {
        url: data.session.onrampUrl,
        provider: 'Coinbase Onramp',
        network: 'base',
        asset: 'USDC',
        expiresInSeconds: 300,
      };
    },
  };
}
