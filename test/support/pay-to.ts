/**
 * Pay-to addresses that are not the development placeholders, for tests that configure a facilitator: with a
 * placeholder, a family that could settle is dropped (EVM refuses to start), see src/payments/reading/pay-to.ts.
 */
export const PAY_TO_ENV = {
  PAY_TO_EVM: '0x1111111111111111111111111111111111111111',
  PAY_TO_SOLANA: 'JAQ5MVHbCkSYRzXunsrNuM2m1LS859PGveHfoYPAmcvZ',
  PAY_TO_STELLAR: 'GAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAWHF',
  PAY_TO_ALGORAND: '737P57X6737P57X6737P57X6737P57X6737P57X6737P57X6737JO4454Y',
} as const;
