import { z } from 'zod';
import { ToolError } from '../../shared/errors.js';
import type { TokenChain } from '../../token-report/chains.js';
import { AttemptFailure } from '../attempt.js';
import type { Fetched, Upstream } from '../upstream.js';

/**
 * GoPlus token security (docs/spec-notes.md#goplus-token-security): `GET /token_security/{chain_id}` and
 * `GET /solana/token_security`, one address per call. Almost every scalar is a string ("0"/"1" flags, fractions of 1
 * as decimal strings); missing fields mean "unknown" and stay undefined here. Errors come in the body, usually with
 * HTTP 200 (`code` other than 1).
 */

/** "0"/"1" (or 0/1) → boolean; anything else (missing, "", null) → undefined (unknown). */
const flag = z
  .union([z.string(), z.number(), z.boolean(), z.null()])
  .optional()
  .transform((v) =>
    v === '1' || v === 1 || v === true ? true : v === '0' || v === 0 || v === false ? false : undefined,
  );

/** Decimal string or number → number; missing, empty or unparsable → undefined. */
const num = z
  .union([z.string(), z.number(), z.null()])
  .optional()
  .transform((v) => {
    if (v === null || v === undefined || (typeof v === 'string' && v.trim() === '')) return undefined;
    const n = Number(v);
    return Number.isFinite(n) ? n : undefined;
  });

const text = z
  .union([z.string(), z.number(), z.null()])
  .optional()
  .transform((v) => (v === null || v === undefined ? undefined : String(v)));

const HolderSchema = z.object({
  address: text,
  token_account: text,
  tag: text,
  is_contract: flag,
  percent: num,
  is_locked: flag,
});
const holders = z
  .array(HolderSchema)
  .nullish()
  .transform((v) => v ?? []);

const EvmTokenSchema = z.object({
  token_name: text,
  token_symbol: text,
  holder_count: num,
  is_open_source: flag,
  is_proxy: flag,
  is_mintable: flag,
  owner_address: text,
  creator_address: text,
  hidden_owner: flag,
  can_take_back_ownership: flag,
  owner_change_balance: flag,
  selfdestruct: flag,
  external_call: flag,
  is_honeypot: flag,
  honeypot_with_same_creator: flag,
  cannot_buy: flag,
  cannot_sell_all: flag,
  buy_tax: num,
  sell_tax: num,
  transfer_pausable: flag,
  trading_cooldown: flag,
  is_blacklisted: flag,
  is_whitelisted: flag,
  anti_whale_modifiable: flag,
  slippage_modifiable: flag,
  personal_slippage_modifiable: flag,
  is_in_dex: flag,
  is_airdrop_scam: flag,
  is_true_token: flag,
  holders,
  lp_holders: holders,
});

const AuthoritySchema = z.object({ address: text, malicious_address: flag });
const authorities = z
  .array(AuthoritySchema)
  .nullish()
  .transform((v) => v ?? []);
const Authority = z
  .object({ status: flag, authority: authorities })
  .nullish()
  .transform((v) => ({ status: v?.status, authority: v?.authority ?? [] }));
const Status = z
  .object({ status: flag })
  .nullish()
  .transform((v) => v?.status);

const SolanaTokenSchema = z.object({
  metadata: z.object({ name: text, symbol: text }).nullish(),
  mintable: Authority,
  freezable: Authority,
  closable: Authority,
  balance_mutable_authority: Authority,
  metadata_mutable: z
    .object({ status: flag, metadata_upgrade_authority: authorities })
    .nullish()
    .transform((v) => ({ status: v?.status, authority: v?.metadata_upgrade_authority ?? [] })),
  transfer_fee: z
    .object({ current_fee_rate: z.unknown().optional(), scheduled_fee_rate: z.unknown().optional() })
    .nullish(),
  transfer_fee_upgradable: Status,
  transfer_hook: z.array(z.unknown()).nullish(),
  transfer_hook_upgradable: Status,
  default_account_state: text,
  default_account_state_upgradable: Status,
  non_transferable: flag,
  // The SDK model spells it this way; live answers use non_transferable (docs/spec-notes.md#goplus-token-security). Both are read.
  none_transferable: flag,
  trusted_token: flag,
  holders,
  creators: authorities,
});

const envelope = <T extends z.ZodType>(token: T) =>
  z.object({
    code: z.union([z.number(), z.string()]),
    message: z.string().nullish(),
    result: z.record(z.string(), token).nullish(),
  });
const EvmAnswerSchema = envelope(EvmTokenSchema);
const SolanaAnswerSchema = envelope(SolanaTokenSchema);

/** GoPlus's view of an EVM token, fields as the API names them, parsed. */
export type EvmTokenSecurity = z.output<typeof EvmTokenSchema> & { family: 'evm' };
/** GoPlus's view of a Solana mint, fields as the API names them, parsed. */
export type SolanaTokenSecurity = z.output<typeof SolanaTokenSchema> & { family: 'solana' };
/** Either view, told apart by `family`. */
export type TokenSecurity = EvmTokenSecurity | SolanaTokenSecurity;

/** One token-security lookup. */
export interface TokenSecurityQuery {
  chain: TokenChain;
  /** The contract (EVM) or mint (Solana), as validated. */
  address: string;
  /** The input field that named the token (for errors). */
  field: string;
  signal?: AbortSignal;
}

/** Security facts of tokens from the GoPlus token-security API. */
export interface GoPlusProvider {
  /** The upstream's label, for `sources` fields. */
  readonly source: string;
  /** The token's security record; not_found when GoPlus has none, invalid_input when it refuses the address or chain. */
  tokenSecurity(query: TokenSecurityQuery): Promise<Fetched<TokenSecurity>>;
}

/** GoPlus asks anonymous callers to wait about 10 s after a 4029 throttle (docs/spec-notes.md#goplus-token-security). */
const THROTTLE_SECONDS = 10;

/** Maps GoPlus body codes other than 1 (OK) to the error the caller sees; most arrive with HTTP 200 (docs/spec-notes.md#goplus-token-security). */
function interpretCode(label: string, q: TokenSecurityQuery) {
  return (_status: number, json: unknown): ToolError | AttemptFailure | undefined => {
    if (typeof json !== 'object' || json === null || !('code' in json)) return undefined;
    const code = Number((json as { code: unknown }).code);
    const said = String((json as { message?: unknown }).message ?? '').slice(0, 120);
    const where = `${q.address} on ${q.chain.label}`;
    switch (code) {
      case 1:
        return undefined;
      case 2:
        return new AttemptFailure('unavailable', `data for ${where} is still being synced (code 2)`);
      case 5000:
        return new AttemptFailure('unavailable', `server error (code 5000)`);
      case 2004:
        return new ToolError(
          'invalid_input',
          `The ${label} says ${q.address} is not a valid token address on ${q.chain.label} (code 2004). Check the address.`,
          { field: q.field },
        );
      case 2018:
        return new ToolError(
          'invalid_input',
          `The ${label} does not support ${q.chain.label} right now (code 2018). Try another chain.`,
          { field: 'chain' },
        );
      case 2020:
        return new ToolError(
          'not_found',
          `${where} is not a token contract according to the ${label} (code 2020); a wallet address? Check the address and chain.`,
          { field: q.field },
        );
      case 2021:
        return new ToolError(
          'not_found',
          `The ${label} has no contract information for ${where} (code 2021). Check the address and chain.`,
          { field: q.field },
        );
      case 4029:
        return new ToolError(
          'upstream_rate_limited',
          `The ${label} is throttling requests right now (code 4029). Try again in ${THROTTLE_SECONDS} s.`,
          {
            details: { retryAfterSeconds: THROTTLE_SECONDS },
          },
        );
      default:
        // 4010-4012 / 4022-4023 (our access token), 5006 (parameters) and anything new: not the caller's to fix.
        return new ToolError(
          'upstream_unavailable',
          `The ${label} refused the lookup (code ${Number.isFinite(code) ? code : '?'}${said ? `: ${said}` : ''}). Try again later.`,
        );
    }
  };
}

/** The record of `address` in a result keyed by address (EVM keys are lower-cased by GoPlus; Solana keys as sent). */
function recordOf<T>(result: Record<string, T> | null | undefined, address: string, evm: boolean): T | undefined {
  if (!result) return undefined;
  if (result[address] !== undefined) return result[address];
  if (!evm) return undefined;
  const wanted = address.toLowerCase();
  const key = Object.keys(result).find((k) => k.toLowerCase() === wanted);
  return key === undefined ? undefined : result[key];
}

/** Builds the GoPlus provider over its upstream client. */
export function createGoPlusProvider(upstream: Upstream): GoPlusProvider {
  const label = upstream.info.label;

  async function tokenSecurity(q: TokenSecurityQuery): Promise<Fetched<TokenSecurity>> {
    const interpret = interpretCode(label, q);
    const query = { contract_addresses: q.address };
    const unknown = () =>
      new ToolError(
        'not_found',
        `The ${label} has no security data for ${q.address} on ${q.chain.label}: it is not a token there, or not indexed yet. Check the address and chain.`,
        {
          field: q.field,
        },
      );
    if (q.chain.family === 'solana') {
      const fetched = await upstream.request({
        path: '/solana/token_security',
        query,
        schema: SolanaAnswerSchema,
        interpret,
        signal: q.signal,
      });
      const found = recordOf(fetched.data.result, q.address, false);
      if (!found) throw unknown();
      return { ...fetched, data: { ...found, family: 'solana' } };
    }
    const fetched = await upstream.request({
      path: `/token_security/${q.chain.goplusId}`,
      query,
      schema: EvmAnswerSchema,
      interpret,
      signal: q.signal,
    });
    const found = recordOf(fetched.data.result, q.address, true);
    if (!found) throw unknown();
    return { ...fetched, data: { ...found, family: 'evm' } };
  }

  return { source: label, tokenSecurity };
}
