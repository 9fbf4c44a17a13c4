import type { DexPair } from '../providers/market/dexscreener.js';
import type { EvmTokenSecurity, SolanaTokenSecurity, TokenSecurity } from '../providers/market/goplus.js';

/**
 * The token-report assessment: facts read from GoPlus (contract) and DexScreener (market), the risk flags they raise
 * and the 0–100 risk score. Score = 100 for a honeypot, else the sum of the weights of the raised flags, capped at 100.
 */

/** Weight of each risk flag in the score, and the words the verdict uses for it. */
export const RISK_FLAGS = {
  honeypot: { weight: 100, words: 'it looks like a honeypot (holders cannot sell)' },
  cannot_sell_all: { weight: 40, words: 'holders cannot sell their whole balance' },
  owner_can_change_balance: { weight: 40, words: 'the owner can change balances' },
  fake_token: { weight: 40, words: 'it imitates another token' },
  airdrop_scam: { weight: 40, words: 'it is flagged as an airdrop scam' },
  balance_mutable: { weight: 40, words: 'an authority can change balances' },
  malicious_authority: { weight: 40, words: 'an authority address is flagged as malicious' },
  hidden_owner: { weight: 30, words: 'it has a hidden owner' },
  reclaimable_ownership: { weight: 30, words: 'ownership can be taken back' },
  selfdestruct: { weight: 30, words: 'the contract can self-destruct' },
  not_open_source: { weight: 25, words: 'the source code is not verified' },
  high_sell_tax: { weight: 25, words: 'the sell tax is above 10%' },
  freezable: { weight: 25, words: 'an authority can freeze holders' },
  cannot_buy: { weight: 20, words: 'it cannot be bought' },
  honeypot_creator: { weight: 20, words: 'its creator made honeypots before' },
  no_dex_pairs: { weight: 20, words: 'it has no DEX pair' },
  high_buy_tax: { weight: 15, words: 'the buy tax is above 10%' },
  mintable: { weight: 15, words: 'new tokens can be minted' },
  transfer_pausable: { weight: 15, words: 'transfers can be paused' },
  tax_modifiable: { weight: 15, words: 'the owner can change the tax' },
  personal_tax_modifiable: { weight: 15, words: 'the owner can set a tax per holder' },
  lp_unlocked: { weight: 15, words: 'most of its liquidity is not locked' },
  transfer_fee: { weight: 15, words: 'transfers carry a fee' },
  transfer_hook: { weight: 15, words: 'transfers run a hook program' },
  low_liquidity: { weight: 15, words: 'its liquidity is under $10,000' },
  high_holder_concentration: { weight: 15, words: 'the top 10 holders own more than half of the supply' },
  blacklist: { weight: 10, words: 'addresses can be blacklisted' },
  proxy: { weight: 10, words: 'the contract is upgradeable (proxy)' },
  closable: { weight: 10, words: 'the mint can be closed' },
  transfer_fee_upgradable: { weight: 10, words: 'the transfer fee can be changed' },
  transfer_hook_upgradable: { weight: 10, words: 'the transfer hook can be changed' },
  default_state_upgradable: { weight: 10, words: 'new accounts can be made frozen' },
  new_token: { weight: 10, words: 'its first pair is less than 7 days old' },
  external_call: { weight: 5, words: 'it calls external contracts' },
  trading_cooldown: { weight: 5, words: 'trading has a cooldown' },
  whitelist: { weight: 5, words: 'it keeps a whitelist' },
  anti_whale_modifiable: { weight: 5, words: 'the anti-whale limit can be changed' },
  metadata_mutable: { weight: 5, words: 'its metadata can be changed' },
  non_transferable: { weight: 100, words: 'it cannot be transferred' },
  default_frozen: { weight: 100, words: 'new holder accounts start frozen' },
} as const satisfies Record<string, { weight: number; words: string }>;

/** The identifier of one risk flag. */
export type RiskFlag = keyof typeof RISK_FLAGS;

/** Thresholds of the market and tax flags. */
export const THRESHOLDS = {
  highTaxPct: 10,
  lowLiquidityUsd: 10_000,
  newTokenDays: 7,
  concentrationPct: 50,
  lockedLpShare: 0.5,
} as const;

/** Risk levels by score: below 20 low, below 50 medium, below 80 high, else critical. */
export type RiskLevel = 'low' | 'medium' | 'high' | 'critical';

/** Everything the report says about a token, before it is worded. */
export interface Assessment {
  name: string;
  symbol: string;
  verified: boolean;
  isHoneypot: boolean;
  ownershipRenounced: boolean;
  /** Raised flags, heaviest first (ties in table order). */
  flags: RiskFlag[];
  score: number;
  level: RiskLevel;
  liquidityUsd: number;
  pairCount: number;
  /** Days since the token's first DEX pair; null without a dated pair. */
  ageDays: number | null;
  /** Percent of supply held by the 10 largest listed holders; null when GoPlus lists none. */
  top10Pct: number | null;
  /** Owner and creator addresses (EVM), or authorities and creators (Solana), for the wallet check. */
  owners: string[];
  creators: string[];
  /** Holders as listed, with percent of supply (EVM addresses; Solana lists token accounts). */
  holders: Array<{ address: string; pct: number }>;
}

const BURN = /^0x0{40}$|^0x0{36}dead$/i;
const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

function levelOf(score: number): RiskLevel {
  return score < 20 ? 'low' : score < 50 ? 'medium' : score < 80 ? 'high' : 'critical';
}

/** Sum of the 10 largest holders' percent of supply (0–100), or null when none is listed. */
export function top10Concentration(holders: ReadonlyArray<{ pct: number }>): number | null {
  if (holders.length === 0) return null;
  const top = [...holders].sort((a, b) => b.pct - a.pct).slice(0, 10);
  return Math.min(
    100,
    round(
      top.reduce((sum, h) => sum + h.pct, 0),
      2,
    ),
  );
}

function evmFacts(t: EvmTokenSecurity) {
  const raised: RiskFlag[] = [];
  const when = (cond: boolean | undefined, flag: RiskFlag) => cond === true && raised.push(flag);
  const taxPct = (v: number | undefined) => (v === undefined ? 0 : v * 100);
  when(t.is_honeypot, 'honeypot');
  when(t.cannot_sell_all, 'cannot_sell_all');
  when(t.owner_change_balance, 'owner_can_change_balance');
  when(t.is_true_token === false, 'fake_token');
  when(t.is_airdrop_scam, 'airdrop_scam');
  when(t.hidden_owner, 'hidden_owner');
  when(t.can_take_back_ownership, 'reclaimable_ownership');
  when(t.selfdestruct, 'selfdestruct');
  when(t.is_open_source === false, 'not_open_source');
  when(taxPct(t.sell_tax) > THRESHOLDS.highTaxPct, 'high_sell_tax');
  when(t.cannot_buy, 'cannot_buy');
  when(t.honeypot_with_same_creator, 'honeypot_creator');
  when(taxPct(t.buy_tax) > THRESHOLDS.highTaxPct, 'high_buy_tax');
  when(t.is_mintable, 'mintable');
  when(t.transfer_pausable, 'transfer_pausable');
  when(t.slippage_modifiable, 'tax_modifiable');
  when(t.personal_slippage_modifiable, 'personal_tax_modifiable');
  const lp = t.lp_holders.filter((h) => h.percent !== undefined);
  const lockedShare = lp
    .filter((h) => h.is_locked === true || (h.address !== undefined && BURN.test(h.address)))
    .reduce((s, h) => s + (h.percent ?? 0), 0);
  when(lp.length > 0 && lockedShare < THRESHOLDS.lockedLpShare, 'lp_unlocked');
  when(t.is_blacklisted, 'blacklist');
  when(t.is_proxy, 'proxy');
  when(t.external_call, 'external_call');
  when(t.trading_cooldown, 'trading_cooldown');
  when(t.is_whitelisted, 'whitelist');
  when(t.anti_whale_modifiable, 'anti_whale_modifiable');
  const owner = t.owner_address?.trim() ?? undefined;
  // No owner function ("") or an owner that is the zero/dead address, and no way to take it back.
  const renounced =
    owner !== undefined &&
    (owner === '' || BURN.test(owner)) &&
    t.hidden_owner !== true &&
    t.can_take_back_ownership !== true;
  return {
    name: t.token_name,
    symbol: t.token_symbol,
    verified: t.is_open_source === true,
    isHoneypot: t.is_honeypot === true,
    renounced,
    raised,
    owners: owner && !BURN.test(owner) ? [owner] : [],
    creators: t.creator_address ? [t.creator_address] : [],
    holders: t.holders.flatMap((h) =>
      h.address && h.percent !== undefined ? [{ address: h.address, pct: h.percent * 100 }] : [],
    ),
  };
}

function solanaFacts(t: SolanaTokenSecurity) {
  const raised: RiskFlag[] = [];
  const when = (cond: boolean | undefined, flag: RiskFlag) => cond === true && raised.push(flag);
  const nonTransferable = t.non_transferable === true || t.none_transferable === true;
  const defaultFrozen = t.default_account_state === '2';
  const allAuthorities = [t.mintable, t.freezable, t.closable, t.balance_mutable_authority, t.metadata_mutable].flatMap(
    (a) => a.authority,
  );
  const fee = t.transfer_fee?.current_fee_rate;
  when(nonTransferable || defaultFrozen, 'honeypot');
  when(nonTransferable, 'non_transferable');
  when(defaultFrozen, 'default_frozen');
  when(t.balance_mutable_authority.status, 'balance_mutable');
  when(
    [...allAuthorities, ...t.creators].some((a) => a.malicious_address === true),
    'malicious_authority',
  );
  when(t.freezable.status, 'freezable');
  when(t.mintable.status, 'mintable');
  when(fee !== undefined && fee !== null, 'transfer_fee');
  when((t.transfer_hook ?? []).length > 0, 'transfer_hook');
  when(t.closable.status, 'closable');
  when(t.transfer_fee_upgradable, 'transfer_fee_upgradable');
  when(t.transfer_hook_upgradable, 'transfer_hook_upgradable');
  when(t.default_account_state_upgradable, 'default_state_upgradable');
  when(t.metadata_mutable.status, 'metadata_mutable');
  const address = (a: { address: string | undefined }) => (a.address ? [a.address] : []);
  return {
    name: t.metadata?.name,
    symbol: t.metadata?.symbol,
    // SPL tokens share the audited token program: "verified" means GoPlus lists the mint as trusted.
    verified: t.trusted_token === true,
    isHoneypot: nonTransferable || defaultFrozen,
    // No authority left that can mint, freeze, close or change balances.
    renounced:
      t.mintable.status === false &&
      t.freezable.status === false &&
      t.closable.status !== true &&
      t.balance_mutable_authority.status !== true,
    raised,
    owners: [t.mintable, t.freezable, t.balance_mutable_authority].flatMap((a) => a.authority.flatMap(address)),
    creators: t.creators.flatMap(address),
    holders: t.holders.flatMap((h) => {
      const at = h.address ?? h.token_account;
      return at && h.percent !== undefined ? [{ address: at, pct: h.percent * 100 }] : [];
    }),
  };
}

/** Assesses one token from its GoPlus record and its DexScreener pairs on the same chain, at time `now` (epoch ms). */
export function assessToken(security: TokenSecurity, pairs: readonly DexPair[], now: number): Assessment {
  const facts = security.family === 'evm' ? evmFacts(security) : solanaFacts(security);
  const liquidityUsd = round(
    pairs.reduce((sum, p) => sum + (p.liquidityUsd ?? 0), 0),
    2,
  );
  const created = pairs.flatMap((p) => (p.createdAt !== undefined && p.createdAt > 0 ? [p.createdAt] : []));
  const ageDays = created.length === 0 ? null : Math.max(0, round((now - Math.min(...created)) / 86_400_000, 1));
  const top10Pct = top10Concentration(facts.holders);
  const raised = new Set<RiskFlag>(facts.raised);
  if (pairs.length === 0) raised.add('no_dex_pairs');
  else if (liquidityUsd < THRESHOLDS.lowLiquidityUsd) raised.add('low_liquidity');
  if (ageDays !== null && ageDays < THRESHOLDS.newTokenDays) raised.add('new_token');
  if (top10Pct !== null && top10Pct > THRESHOLDS.concentrationPct) raised.add('high_holder_concentration');
  const order = Object.keys(RISK_FLAGS) as RiskFlag[];
  const flags = [...raised].sort(
    (a, b) => RISK_FLAGS[b].weight - RISK_FLAGS[a].weight || order.indexOf(a) - order.indexOf(b),
  );
  const score = facts.isHoneypot
    ? 100
    : Math.min(
        100,
        flags.reduce((sum, f) => sum + RISK_FLAGS[f].weight, 0),
      );
  const fromPairs = pairs.find((p) => p.tokenName || p.tokenSymbol);
  return {
    name: (facts.name?.trim() || fromPairs?.tokenName || '').trim(),
    symbol: (facts.symbol?.trim() || fromPairs?.tokenSymbol || '').trim(),
    verified: facts.verified,
    isHoneypot: facts.isHoneypot,
    ownershipRenounced: facts.renounced,
    flags,
    score,
    level: levelOf(score),
    liquidityUsd,
    pairCount: pairs.length,
    ageDays,
    top10Pct,
    owners: facts.owners,
    creators: facts.creators,
    holders: facts.holders,
  };
}
