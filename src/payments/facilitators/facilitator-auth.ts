/**
 * How requests to a remote facilitator authenticate: static headers per facilitator URL (FACILITATOR_HEADERS, e.g.
 * `Authorization: Bearer …` for a self-hosted or third-party facilitator) and, for the Coinbase Developer Platform
 * facilitator, one short-lived CDP JWT per request signed with the operator's CDP Secret API key (CDP_API_KEY_ID /
 * CDP_API_KEY_SECRET, the key the faucet already uses) and bound to the request's method, host and path.
 *
 * `@coinbase/x402`'s `createCdpAuthHeaders` is not used: it pulls `@coinbase/cdp-sdk` (104 packages, 137 MB with a
 * second viem, @solana/kit 5 and axios), signs three JWTs (verify, settle, supported) for every single request, and
 * only knows the host api.cdp.coinbase.com. The JWT signed here has the same header and claims as the SDK's
 * `generateJwt` (alg ES256/EdDSA, kid, nonce, iss "cdp", sub, nbf, exp = nbf + 120, uris ["METHOD host/path"]), except
 * `iat`, which the CDP API does not require. Header values are never logged and never quoted in errors.
 * Operator documentation, including this decision: docs/facilitators.md.
 */
import { z } from 'zod';
import { cdpJwt, type CdpCredentials } from '../../providers/chain/cdp-auth.js';

/** The host of the Coinbase Developer Platform API (its facilitator is `https://api.cdp.coinbase.com/platform/v2/x402`). */
export const CDP_API_HOST = 'api.cdp.coinbase.com';

/** Authentication settings of the remote facilitators, by {@link facilitatorKey}. Never log them. */
export interface FacilitatorAuthSettings {
  /** Static headers sent with every request to a facilitator (FACILITATOR_HEADERS). */
  headers: Record<string, Record<string, string>>;
  /** Facilitators that get a CDP JWT per request: on api.cdp.coinbase.com, or on the origin of CDP_API_URL. */
  cdp: string[];
}

/** A facilitator base URL in the one form settings are looked up by: parsed, without trailing slashes. */
export function facilitatorKey(url: string): string {
  return new URL(url).href.replace(/\/+$/, '');
}

/** A facilitator URL as errors and logs may show it: origin and path, never a user name, password or query. */
export function shownUrl(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`.replace(/\/+$/, '');
}

/** A key of FACILITATOR_HEADERS as an error may show it: a URL without credentials, else nothing of it. */
function safeUrl(key: string): string {
  try {
    return shownUrl(key);
  } catch {
    return 'a key that is not a URL';
  }
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const RESERVED = new Set([
  'host',
  'content-length',
  'content-type',
  'connection',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'te',
  'expect',
]);

const HeadersSchema = z.record(
  z.string(),
  z.record(
    z
      .string()
      .regex(HEADER_NAME, 'is not a valid header name')
      .refine((name) => !RESERVED.has(name.toLowerCase()), 'is set by the client itself'),
    // The value is never echoed: only what is wrong with it.
    z
      .string()
      .min(1, 'is empty')
      .refine((value) => !/[\r\n\0]/.test(value), 'contains a line break'),
  ),
);

/** Parses FACILITATOR_HEADERS (`{"<facilitator URL>": {"<Header-Name>": "<value>"}}`); errors name the URL and header, never a value. */
export function parseFacilitatorHeaders(text: string | undefined): Record<string, Record<string, string>> {
  if (text === undefined) return {};
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // JSON.parse quotes the text it could not read: never pass its message on.
    throw new Error(
      'FACILITATOR_HEADERS is not valid JSON; expected {"<facilitator URL>": {"<Header-Name>": "<value>"}}',
    );
  }
  const parsed = HeadersSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    // The path names the facilitator (without credentials) and a valid header name; a rejected name is not quoted.
    const [url, ...rest] = issue.path.map(String);
    const invalidName = issue.code === 'invalid_key';
    const where = [...(url === undefined ? [] : [safeUrl(url)]), ...(invalidName ? [] : rest)].join(' → ');
    const reason = invalidName
      ? `names a header that is not a valid HTTP header name, or one the client sets itself (${[...RESERVED].join(', ')})`
      : issue.code === 'invalid_type'
        ? 'must map facilitator URLs to objects of header strings'
        : issue.message;
    throw new Error(`FACILITATOR_HEADERS ${where ? `${where} ` : ''}${reason}`);
  }
  const out: Record<string, Record<string, string>> = {};
  for (const [url, headers] of Object.entries(parsed.data)) {
    // The key is not quoted: a value pasted in the wrong place must not end up in an error.
    if (!z.string().url().safeParse(url).success)
      throw new Error('FACILITATOR_HEADERS has a key that is not a facilitator URL');
    out[facilitatorKey(url)] = headers;
  }
  return out;
}

/**
 * The authentication of the configured facilitators: static headers must name a configured facilitator URL (a typo
 * would silently send none); a CDP facilitator needs the CDP key. `urls` are the facilitator URLs in use.
 */
export function facilitatorAuthSettings(
  headersText: string | undefined,
  urls: readonly string[],
  cdp: { apiUrl: string | undefined; hasKey: boolean },
): FacilitatorAuthSettings {
  const headers = parseFacilitatorHeaders(headersText);
  const inUse = new Set(urls.map(facilitatorKey));
  for (const url of Object.keys(headers)) {
    if (!inUse.has(url))
      throw new Error(
        `FACILITATOR_HEADERS names ${shownUrl(url)}, which is not a configured facilitator URL (FACILITATOR_URL or FACILITATOR_URL_<FAMILY>)`,
      );
  }
  const cdpOrigin = cdp.apiUrl ? new URL(cdp.apiUrl).origin : undefined;
  const cdpUrls = [...inUse].filter(
    (url) => new URL(url).hostname === CDP_API_HOST || new URL(url).origin === cdpOrigin,
  );
  for (const url of cdpUrls) {
    if (Object.keys(headers[url] ?? {}).some((name) => name.toLowerCase() === 'authorization')) {
      throw new Error(
        `FACILITATOR_HEADERS sets Authorization for ${shownUrl(url)}, which is signed with the CDP key instead`,
      );
    }
  }
  const first = cdpUrls[0];
  if (first && !cdp.hasKey) {
    throw new Error(
      `the facilitator ${shownUrl(first)} is the Coinbase Developer Platform's, which authenticates every request: set CDP_API_KEY_ID and CDP_API_KEY_SECRET (a CDP Secret API key)`,
    );
  }
  return { headers, cdp: cdpUrls };
}

/** One request to a facilitator: its method and full URL (what a CDP JWT is bound to). */
export interface FacilitatorRequest {
  method: 'GET' | 'POST';
  url: string;
}

/**
 * The `headers` callback of one facilitator's HTTP client: its static headers, then (for a CDP facilitator) an
 * `Authorization: Bearer <JWT>` signed for this very request. Undefined when the facilitator needs no headers.
 */
export function facilitatorHeaders(
  url: string,
  auth: FacilitatorAuthSettings,
  credentials: CdpCredentials | undefined,
): ((request: FacilitatorRequest) => Record<string, string>) | undefined {
  const key = facilitatorKey(url);
  const fixed = auth.headers[key] ?? {};
  const cdp = auth.cdp.includes(key) ? credentials : undefined;
  if (!cdp) return Object.keys(fixed).length > 0 ? () => fixed : undefined;
  return (request) => ({ ...fixed, authorization: `Bearer ${cdpJwt(cdp, request.method, request.url)}` });
}
