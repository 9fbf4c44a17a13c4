// Fixture addresses of the GoPlus look-alike and its Solana token records (the nested Solana shape, keyed by mint).

/** Fixture addresses: EVM contracts (mixed case, as callers send them) and Solana mints. */
export const TOKENS = {
  /** Base: verified, ownerless, 3 % sell tax, LP burnt, spread holders; two Base pairs (and one on Ethereum). */
  clean: '0xA4c123b1612dd272d1371c17149d439536b3216f',
  /** Base: honeypot (cannot sell, 100 % sell tax), unverified, hidden owner; one young, thin pair. */
  honeypot: '0xDaeeb975729fae923d5a4fd12aabfe228f219e9c',
  /** Ethereum: mintable proxy with a 12 % sell tax and concentrated holders; one pair. */
  risky: '0xdba41ecccc3fc1626e53a13043b026c48bbf33fe',
  /** Base: known to GoPlus (no owner function, no holder list) but on no DEX. */
  untraded: '0xb2737f6a6f0fb23c6f5da2cec255404e4fb44003',
  /** Base: a wallet, not a contract (GoPlus code 2020). */
  wallet: '0x4d6608697a8d41bed440e50454f31af3176813e0',
  /** Base: a contract GoPlus has never seen (`result: {}`). */
  unknown: '0x2ea68ef786e4d3cea27d26934b484e73cf575dcb',
  /** Solana: trusted mint, no mint/freeze authority, mutable metadata; two pairs. */
  solClean: 'TDPM6oQ2NcWVn2RNagKZ58sFy76HJ3zrCJq9uUwkuHSA',
  /** Solana: mint and freeze authority, Token-2022 transfer fee, concentrated; one young pair. */
  solRisky: 'bZdYmM6J4tmCUz5J2h6tH6fwF5Hx8W1NcTJg93anG8BH',
} as const;

/** Owner of `risky` and mint authority of `solRisky`, for the wallet checks. */
export const OWNERS = {
  risky: '0xff9243a8f506b40928b5b7a767c76fb008f86beb',
  riskyCreator: '0x2ea68ef786e4d3cea27d26934b484e73cf575dca',
  solRiskyAuthority: '4CDLhLaqEKVZkCJPt2H312oZcDZXGV7juiUjYbvySZLm',
} as const;

const authority = (address: string) => ({ address, malicious_address: 0 });
const solHolder = (account: string, percent: string) => ({
  token_account: account,
  tag: '',
  balance: String(Number(percent) * 1e6),
  percent,
  is_locked: 0,
});
const noAuthority = { status: '0', authority: [] };

/** Solana records by mint. */
export const SOLANA_RECORDS: Record<string, Record<string, unknown>> = {
  [TOKENS.solClean]: {
    metadata: { name: 'Bonkish', symbol: 'BONKS', description: '', uri: 'https://example.org/bonks.json' },
    mintable: noAuthority,
    freezable: noAuthority,
    closable: noAuthority,
    balance_mutable_authority: noAuthority,
    metadata_mutable: {
      status: '1',
      metadata_upgrade_authority: [authority('9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM')],
    },
    transfer_fee: { current_fee_rate: null, scheduled_fee_rate: null },
    transfer_fee_upgradable: { status: '0' },
    transfer_hook: [],
    transfer_hook_upgradable: { status: '0' },
    default_account_state: '1',
    default_account_state_upgradable: { status: '0' },
    non_transferable: '0',
    trusted_token: 1,
    holders: [
      solHolder('HoLd1111111111111111111111111111111111111111', '0.09'),
      solHolder('HoLd2222222222222222222222222222222222222222', '0.06'),
      solHolder('HoLd3333333333333333333333333333333333333333', '0.031'),
    ],
    lp_holders: [],
    dex: [
      {
        dex_name: 'Raydium',
        type: 'Standard',
        id: 'PooL1111111111111111111111111111111111111111',
        price: '0.00002',
        tvl: '1200000',
        burn_percent: 0,
        fee_rate: '0.0025',
        open_time: '1700000000',
      },
    ],
    creators: [],
  },
  [TOKENS.solRisky]: {
    metadata: { name: 'Freeze Cat', symbol: 'FCAT', description: '', uri: '' },
    mintable: { status: '1', authority: [authority(OWNERS.solRiskyAuthority)] },
    freezable: { status: '1', authority: [authority(OWNERS.solRiskyAuthority)] },
    closable: noAuthority,
    balance_mutable_authority: noAuthority,
    metadata_mutable: { status: '0', metadata_upgrade_authority: [] },
    transfer_fee: { current_fee_rate: { fee_rate: '0.02', maximum_fee: '1000000' }, scheduled_fee_rate: null },
    transfer_fee_upgradable: { status: '0' },
    transfer_hook: [],
    transfer_hook_upgradable: { status: '0' },
    default_account_state: '1',
    default_account_state_upgradable: { status: '0' },
    // The SDK's spelling; live answers use non_transferable (§6.2).
    none_transferable: '0',
    trusted_token: 0,
    holders: [
      solHolder('FcAt1111111111111111111111111111111111111111', '0.5'),
      solHolder('FcAt2222222222222222222222222222222222222222', '0.3'),
    ],
    lp_holders: [],
    dex: [],
    creators: [authority(OWNERS.solRiskyAuthority)],
  },
};

/** The chain ids of §6.1. */
