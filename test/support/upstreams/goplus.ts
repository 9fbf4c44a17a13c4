import { OWNERS, SOLANA_RECORDS, TOKENS } from './goplus-fixture.js';
import { startLookalikeServer, type Lookalike, type LookalikeOptions, type LookalikeReply } from './server.js';

/**
 * A look-alike of the GoPlus token-security API (/work/shared/docs/upstream-apis.md §6.1, §6.2, §13):
 * `GET [/api/v1]/token_security/{chain_id}?contract_addresses=` answers `{code: 1, message: "OK", result: {<lower-cased
 * address>: {...}}}` with almost every scalar a string ("0"/"1" flags, taxes and percents as fractions of 1) and
 * `holders[].is_contract`/`is_locked` as numbers; `GET [/api/v1]/solana/token_security` answers the nested Solana shape
 * keyed by the mint exactly as sent. An unknown token is `result: {}`; a wallet (non-contract) address is code 2020;
 * a chain id it does not support is code 2018 — all with HTTP 200.
 * Handler failure modes: `error200` = code `errorCode` (default 4029, the throttle) with HTTP 200, `empty` =
 * `result: {}`, `mismatch` = `holders` as a string.
 */

export { OWNERS, SOLANA_RECORDS, TOKENS } from './goplus-fixture.js';

const ZERO = '0x0000000000000000000000000000000000000000';
const DEAD = '0x000000000000000000000000000000000000dead';

/** GoPlus's EVM defaults: every flag "0". */
const EVM_DEFAULTS: Record<string, unknown> = Object.fromEntries(
  [
    'is_open_source',
    'is_proxy',
    'is_mintable',
    'hidden_owner',
    'can_take_back_ownership',
    'owner_change_balance',
    'selfdestruct',
    'external_call',
    'is_honeypot',
    'honeypot_with_same_creator',
    'cannot_buy',
    'cannot_sell_all',
    'transfer_pausable',
    'trading_cooldown',
    'is_blacklisted',
    'is_whitelisted',
    'is_anti_whale',
    'anti_whale_modifiable',
    'slippage_modifiable',
    'personal_slippage_modifiable',
    'is_airdrop_scam',
    'trust_list',
  ].map((k) => [k, '0']),
);

const holder = (address: string, percent: string, extra: Record<string, unknown> = {}) => ({
  address,
  tag: '',
  is_contract: 0,
  balance: String(Number(percent) * 1e9),
  percent,
  is_locked: 0,
  ...extra,
});
const hex = (i: number) => `0x${i.toString(16).padStart(40, '0')}`;

/** EVM records by `${chain_id}:${lower-cased address}`. */
export const EVM_RECORDS: Record<string, Record<string, unknown>> = {
  [`8453:${TOKENS.clean.toLowerCase()}`]: {
    ...EVM_DEFAULTS,
    token_name: 'Example',
    token_symbol: 'EXM',
    total_supply: '1000000000',
    holder_count: '5321',
    is_open_source: '1',
    owner_address: ZERO,
    owner_balance: '0',
    owner_percent: '0.000000',
    creator_address: hex(0xc0),
    creator_balance: '1200',
    creator_percent: '0.000001',
    buy_tax: '0',
    sell_tax: '0.03',
    is_in_dex: '1',
    dex: [{ name: 'UniswapV2', liquidity: '250000.12', pair: hex(0x1001) }],
    // Deliberately not sorted: the report sorts by percent itself.
    holders: [
      ['0.02', 1],
      ['0.12', 2],
      ['0.004', 3],
      ['0.05', 4],
      ['0.08', 5],
      ['0.04', 6],
      ['0.03', 7],
      ['0.02', 8],
      ['0.015', 9],
      ['0.01', 10],
      ['0.01', 11],
      ['0.005', 12],
    ].map(([p, i]) => holder(hex(0xa000 + Number(i)), String(p))),
    lp_holder_count: '12',
    lp_total_supply: '1000.0',
    lp_holders: [
      {
        address: DEAD,
        tag: 'Burn',
        is_contract: 0,
        balance: '990.0',
        percent: '0.99',
        is_locked: 1,
        locked_detail: [],
      },
      { address: hex(0xb1), tag: '', is_contract: 0, balance: '10.0', percent: '0.01', is_locked: 0 },
    ],
    is_true_token: '1',
    fake_token: null,
    other_potential_risks: '',
    note: '',
  },
  [`8453:${TOKENS.honeypot.toLowerCase()}`]: {
    ...EVM_DEFAULTS,
    token_name: 'SafeRocket',
    token_symbol: 'SRKT',
    total_supply: '1000000',
    holder_count: '88',
    owner_address: hex(0xbad),
    creator_address: hex(0xbad),
    hidden_owner: '1',
    is_honeypot: '1',
    cannot_sell_all: '1',
    buy_tax: '0.05',
    sell_tax: '1',
    is_in_dex: '1',
    holders: [holder(hex(0xbad), '0.61'), holder(hex(0xbee), '0.2')],
    lp_holders: [],
  },
  [`1:${TOKENS.risky.toLowerCase()}`]: {
    ...EVM_DEFAULTS,
    token_name: 'Mintable Dollar',
    token_symbol: 'MDLR',
    total_supply: '50000000',
    holder_count: '410',
    is_open_source: '1',
    is_proxy: '1',
    is_mintable: '1',
    owner_address: OWNERS.risky,
    creator_address: OWNERS.riskyCreator,
    buy_tax: '0.02',
    sell_tax: '0.12',
    is_in_dex: '1',
    holders: [holder(OWNERS.risky, '0.35'), holder(hex(0xd1), '0.2'), holder(hex(0xd2), '0.1', { is_contract: 1 })],
    lp_holders: [{ address: hex(0xe1), tag: 'UniCrypt', is_contract: 1, balance: '600', percent: '0.6', is_locked: 1 }],
  },
  // GoPlus leaves out what it does not know: no holder list, no taxes (not in a DEX).
  [`8453:${TOKENS.untraded}`]: {
    token_name: 'Quiet Token',
    token_symbol: 'QT',
    total_supply: '21000000',
    is_open_source: '1',
    is_proxy: '0',
    is_mintable: '0',
    owner_address: '',
    is_in_dex: '0',
  },
};

const SUPPORTED_CHAIN_IDS = new Set(['1', '56', '8453', '42161', '137', '10', '43114']);
/** Wallets (not contracts) the look-alike knows, lower-cased. */
const WALLETS = new Set([TOKENS.wallet, OWNERS.risky, OWNERS.riskyCreator].map((a) => a.toLowerCase()));

/** A running GoPlus look-alike; `errorCode` is the code its `error200` mode answers. */
export interface GoPlusLookalike extends Lookalike {
  errorCode: number;
}

const ok = (result: Record<string, unknown>): LookalikeReply => ({ json: { code: 1, message: 'OK', result } });
const fail = (code: number, message: string): LookalikeReply => ({ json: { code, message, result: null } });

/** Starts the GoPlus look-alike with the fixture above. */
export async function startGoPlusLookalike(options: LookalikeOptions = {}): Promise<GoPlusLookalike> {
  const state = { errorCode: 4029 };
  const server = await startLookalikeServer((req, mode) => {
    const address = (req.query.get('contract_addresses') ?? '').split(',')[0]!.trim();
    if (mode === 'error200') return fail(state.errorCode, state.errorCode === 4029 ? 'too many requests' : 'error');
    if (mode === 'empty') return ok({});
    const solana = /^(?:\/api\/v1)?\/solana\/token_security$/.test(req.path);
    const evm = /^(?:\/api\/v1)?\/token_security\/([^/]+)$/.exec(req.path);
    if (!solana && !evm) return { status: 404, text: '404 page not found' };
    if (address === '') return fail(5006, 'param error');
    let record: Record<string, unknown> | undefined;
    let key = address;
    if (solana) {
      record = SOLANA_RECORDS[address];
    } else {
      const chainId = evm![1]!;
      if (!SUPPORTED_CHAIN_IDS.has(chainId)) return fail(2018, 'chain not supported');
      if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return fail(2004, 'contract address format error');
      if (WALLETS.has(address.toLowerCase())) return fail(2020, 'non-contract address');
      key = address.toLowerCase();
      record = EVM_RECORDS[`${chainId}:${key}`];
    }
    if (!record) return ok({});
    return ok({ [key]: mode === 'mismatch' ? { ...record, holders: 'unavailable' } : record });
  }, options);
  return Object.defineProperty(server, 'errorCode', {
    get: () => state.errorCode,
    set: (code: number) => {
      state.errorCode = code;
    },
  }) as GoPlusLookalike;
}
