/**
 * The placeholder addresses Tollbooth ships for development, in one place both sides read: the server advertises
 * DEV_PAY_TO when no `PAY_TO_*` is set (src/config/config.ts), and the paying agent refuses to sign anything paying to one
 * of them or to a family's all-zero address (src/agent/choose.ts). Nobody holds the keys of these addresses.
 */

/** Clearly labelled development pay-to addresses (32 bytes of 0xde), used only when none are configured. */
export const DEV_PAY_TO = {
  evm: '0x00000000000000000000000000000000DeaDBeef',
  svm: 'FzzcmrPGHCwHy6XfqKQybLLMCFhgX7R33axfwNwzrxbw',
  stellar: 'GDPN5XW633PN5XW633PN5XW633PN5XW633PN5XW633PN5XW633PN5MZU',
  algorand: '33PN5XW633PN5XW633PN5XW633PN5XW633PN5XW633PN5XW633PMWXSJFI',
} as const;

/** Development fee-payer / facilitator placeholders (32 bytes of 0xfe), replaced by real signers when configured. */
export const DEV_FEE_PAYER = {
  evm: '0x000000000000000000000000000000000000FeE5',
  svm: 'JAQ5MVHbCkSYRzXunsrNuM2m1LS859PGveHfoYPAmcvZ',
  algorand: '737P57X6737P57X6737P57X6737P57X6737P57X6737P57X6737JO4454Y',
} as const;

/** Each family's all-zero address (EVM zero address, Solana's all-zero key, Stellar's and Algorand's zero keys). */
export const ZERO_ADDRESSES = {
  evm: '0x0000000000000000000000000000000000000000',
  svm: '11111111111111111111111111111111',
  stellar: 'GAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAWHF',
  algorand: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAY5HFKQ',
} as const;

const PLACEHOLDERS = new Set(
  [...Object.values(DEV_PAY_TO), ...Object.values(ZERO_ADDRESSES)].map((a) =>
    a.startsWith('0x') ? a.toLowerCase() : a,
  ),
);

/** True when `address` is a development pay-to placeholder or an all-zero address: money sent there is lost. */
export function isPlaceholderAddress(address: string | undefined): boolean {
  if (typeof address !== 'string') return false;
  const trimmed = address.trim();
  return PLACEHOLDERS.has(/^0x/i.test(trimmed) ? trimmed.toLowerCase() : trimmed);
}
