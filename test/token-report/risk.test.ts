import { describe, expect, it } from 'vitest';
import type { DexPair } from '../../src/providers/market/dexscreener.js';
import type { EvmTokenSecurity, SolanaTokenSecurity } from '../../src/providers/market/goplus.js';
import { assessToken, RISK_FLAGS, top10Concentration } from '../../src/token-report/risk.js';

const NOW = Date.UTC(2026, 4, 1);
const DAY = 86_400_000;
const ZERO = '0x0000000000000000000000000000000000000000';

/** An EVM record with every flag known and false, no owner function, no holders. */
function evm(overrides: Partial<EvmTokenSecurity> = {}): EvmTokenSecurity {
  return {
    family: 'evm',
    token_name: 'Token',
    token_symbol: 'TKN',
    holder_count: 100,
    is_open_source: true,
    is_proxy: false,
    is_mintable: false,
    owner_address: '',
    creator_address: undefined,
    hidden_owner: false,
    can_take_back_ownership: false,
    owner_change_balance: false,
    selfdestruct: false,
    external_call: false,
    is_honeypot: false,
    honeypot_with_same_creator: false,
    cannot_buy: false,
    cannot_sell_all: false,
    buy_tax: 0,
    sell_tax: 0,
    transfer_pausable: false,
    trading_cooldown: false,
    is_blacklisted: false,
    is_whitelisted: false,
    anti_whale_modifiable: false,
    slippage_modifiable: false,
    personal_slippage_modifiable: false,
    is_in_dex: true,
    is_airdrop_scam: false,
    is_true_token: true,
    holders: [],
    lp_holders: [],
    ...overrides,
  } as EvmTokenSecurity;
}

const none = { status: false, authority: [] };
function solana(overrides: Partial<SolanaTokenSecurity> = {}): SolanaTokenSecurity {
  return {
    family: 'solana',
    metadata: { name: 'Mint', symbol: 'MNT' },
    mintable: none,
    freezable: none,
    closable: none,
    balance_mutable_authority: none,
    metadata_mutable: none,
    transfer_fee: { current_fee_rate: null, scheduled_fee_rate: null },
    transfer_fee_upgradable: false,
    transfer_hook: [],
    transfer_hook_upgradable: false,
    default_account_state: '1',
    default_account_state_upgradable: false,
    non_transferable: false,
    none_transferable: undefined,
    trusted_token: true,
    holders: [],
    creators: [],
    ...overrides,
  } as SolanaTokenSecurity;
}

function pair(liquidityUsd: number | undefined, ageDays: number | undefined): DexPair {
  return {
    dex: 'uniswap',
    pairAddress: '0xp',
    tokenName: 'Token',
    tokenSymbol: 'TKN',
    quoteSymbol: 'WETH',
    liquidityUsd,
    volume24hUsd: 1,
    createdAt: ageDays === undefined ? undefined : NOW - ageDays * DAY,
  };
}
const deep = [pair(500_000, 300)];

describe('assessToken on EVM records', () => {
  it('finds nothing on a verified, ownerless, liquid, old and spread token: score 0, low', () => {
    const a = assessToken(evm({ owner_address: ZERO }), deep, NOW);
    expect(a).toMatchObject({
      flags: [],
      score: 0,
      level: 'low',
      verified: true,
      isHoneypot: false,
      ownershipRenounced: true,
      liquidityUsd: 500_000,
      pairCount: 1,
      ageDays: 300,
      top10Pct: null,
    });
  });

  it('scores a honeypot 100 whatever else it finds, with honeypot as the first flag', () => {
    const a = assessToken(evm({ is_honeypot: true, is_proxy: true }), deep, NOW);
    expect(a.score).toBe(100);
    expect(a.level).toBe('critical');
    expect(a.isHoneypot).toBe(true);
    expect(a.flags).toEqual(['honeypot', 'proxy']);
  });

  it('adds the documented weights of the flags it raises, heaviest first, capped at 100', () => {
    const a = assessToken(evm({ is_mintable: true, is_proxy: true, external_call: true }), deep, NOW);
    expect(a.flags).toEqual(['mintable', 'proxy', 'external_call']);
    expect(a.score).toBe(RISK_FLAGS.mintable.weight + RISK_FLAGS.proxy.weight + RISK_FLAGS.external_call.weight);
    expect(a.level).toBe('medium');
    const worst = assessToken(
      evm({ owner_change_balance: true, cannot_sell_all: true, hidden_owner: true, selfdestruct: true }),
      deep,
      NOW,
    );
    expect(worst.score).toBe(100);
    expect(worst.isHoneypot).toBe(false);
  });

  it('raises a high tax only above 10 %', () => {
    expect(assessToken(evm({ sell_tax: 0.1, buy_tax: 0.1 }), deep, NOW).flags).toEqual([]);
    expect(assessToken(evm({ sell_tax: 0.11, buy_tax: 0.2 }), deep, NOW).flags).toEqual([
      'high_sell_tax',
      'high_buy_tax',
    ]);
  });

  it('calls ownership renounced only without an owner (or a zero/dead owner) and without a way back', () => {
    const renounced = (o: Partial<EvmTokenSecurity>) => assessToken(evm(o), deep, NOW).ownershipRenounced;
    expect(renounced({ owner_address: '' })).toBe(true);
    expect(renounced({ owner_address: '0x000000000000000000000000000000000000dEaD' })).toBe(true);
    expect(renounced({ owner_address: undefined })).toBe(false);
    expect(renounced({ owner_address: '0x1111111111111111111111111111111111111111' })).toBe(false);
    expect(renounced({ owner_address: ZERO, can_take_back_ownership: true })).toBe(false);
    expect(renounced({ owner_address: ZERO, hidden_owner: true })).toBe(false);
  });

  it('counts locked or burnt LP as locked and flags LP that is mostly unlocked', () => {
    const lp = (percent: number, is_locked: boolean, address = '0x2222222222222222222222222222222222222222') => ({
      address,
      percent,
      is_locked,
      tag: undefined,
      token_account: undefined,
      is_contract: false,
    });
    expect(assessToken(evm({ lp_holders: [lp(0.6, true), lp(0.4, false)] }), deep, NOW).flags).toEqual([]);
    expect(
      assessToken(
        evm({ lp_holders: [lp(0.6, false, '0x000000000000000000000000000000000000dead'), lp(0.4, false)] }),
        deep,
        NOW,
      ).flags,
    ).toEqual([]);
    expect(assessToken(evm({ lp_holders: [lp(0.3, true), lp(0.7, false)] }), deep, NOW).flags).toEqual(['lp_unlocked']);
  });

  it('reads the market: no pair, thin liquidity, a young first pair, concentrated holders', () => {
    const untraded = assessToken(evm(), [], NOW);
    expect(untraded).toMatchObject({
      flags: ['no_dex_pairs'],
      liquidityUsd: 0,
      pairCount: 0,
      ageDays: null,
      score: 20,
    });
    const young = assessToken(evm(), [pair(9_999.99, 6.9), pair(undefined, undefined)], NOW);
    expect(young).toMatchObject({
      flags: ['low_liquidity', 'new_token'],
      liquidityUsd: 9999.99,
      pairCount: 2,
      ageDays: 6.9,
    });
    // The flag follows the age as reported (rounded to 1 decimal): 6.96 days shows as 7 and is not new.
    expect(assessToken(evm(), [pair(20_000, 6.96)], NOW)).toMatchObject({ flags: [], ageDays: 7 });
    const holders = [0.3, 0.15, 0.06].map((percent, i) => ({
      address: `0x${String(i).padStart(40, '0')}`,
      percent,
      tag: undefined,
      token_account: undefined,
      is_contract: false,
      is_locked: false,
    }));
    const concentrated = assessToken(evm({ holders }), deep, NOW);
    expect(concentrated.top10Pct).toBe(51);
    expect(concentrated.flags).toEqual(['high_holder_concentration']);
  });

  it('takes name and symbol from the DEX pair when GoPlus has none', () => {
    const a = assessToken(
      evm({ token_name: undefined, token_symbol: '  ' }),
      [{ ...pair(1, 1), tokenName: 'Pair Name', tokenSymbol: 'PN' }],
      NOW,
    );
    expect([a.name, a.symbol]).toEqual(['Pair Name', 'PN']);
  });
});

describe('assessToken on Solana records', () => {
  it('reads a mint without authorities as renounced and verified when trusted', () => {
    const a = assessToken(solana(), deep, NOW);
    expect(a).toMatchObject({
      name: 'Mint',
      symbol: 'MNT',
      verified: true,
      ownershipRenounced: true,
      isHoneypot: false,
      flags: [],
      score: 0,
    });
  });

  it('flags authorities, fees and hooks, and names the authorities as owners', () => {
    const authority = {
      status: true,
      authority: [{ address: 'Auth1111111111111111111111111111111111111111', malicious_address: false }],
    };
    const a = assessToken(
      solana({
        mintable: authority,
        freezable: authority,
        transfer_fee: { current_fee_rate: { fee_rate: '0.02' } },
        transfer_hook: [{}],
        trusted_token: false,
      }),
      deep,
      NOW,
    );
    expect(a.flags).toEqual(['freezable', 'mintable', 'transfer_fee', 'transfer_hook']);
    expect(a.score).toBe(70);
    expect(a.ownershipRenounced).toBe(false);
    expect(a.verified).toBe(false);
    expect(a.owners).toContain('Auth1111111111111111111111111111111111111111');
  });

  it('treats a non-transferable mint (either spelling) or frozen-by-default accounts as a honeypot', () => {
    expect(assessToken(solana({ non_transferable: true }), deep, NOW)).toMatchObject({
      isHoneypot: true,
      score: 100,
      flags: ['honeypot', 'non_transferable'],
    });
    expect(assessToken(solana({ non_transferable: undefined, none_transferable: true }), deep, NOW).isHoneypot).toBe(
      true,
    );
    expect(assessToken(solana({ default_account_state: '2' }), deep, NOW).flags).toEqual([
      'honeypot',
      'default_frozen',
    ]);
  });

  it('flags a malicious authority address', () => {
    const bad = {
      status: false,
      authority: [{ address: 'Bad11111111111111111111111111111111111111111', malicious_address: true }],
    };
    expect(assessToken(solana({ metadata_mutable: { ...bad, status: true } }), deep, NOW).flags).toEqual([
      'malicious_authority',
      'metadata_mutable',
    ]);
  });
});

describe('top10Concentration', () => {
  it('sums the 10 largest holders, whatever the order, and caps at 100', () => {
    const holders = [1, 12, 2, 11, 3, 10, 4, 9, 5, 8, 6, 7].map((pct) => ({ pct }));
    expect(top10Concentration(holders)).toBe(12 + 11 + 10 + 9 + 8 + 7 + 6 + 5 + 4 + 3);
    expect(top10Concentration([{ pct: 70 }, { pct: 40 }])).toBe(100);
    expect(top10Concentration([])).toBeNull();
  });
});
