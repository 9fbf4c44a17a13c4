import { z } from 'zod';
import { EvmAddressSchema, SolanaAddressSchema } from '../schemas/common.js';
import { NOT_YET_AVAILABLE_NOTE, notYetAvailable } from '../src/not-yet-available.js';
import { defineTool } from '../src/tool.js';

const STEP_SLUGS = ['wallet-balances', 'gas-snapshot', 'onramp-link'] as const;

const WalletReadinessInputSchema = z.object({
  address: EvmAddressSchema.describe('EVM wallet address (0x + 40 hex digits) to check.'),
  solanaAddress: SolanaAddressSchema.optional().describe(
    'Optional base58 Solana address; adds its stablecoin balance to the wallet-balances step.',
  ),
});

const WalletReadinessOutputSchema = z.object({
  pack: z.string().describe('Name of the skill pack that was run.'),
  args: z
    .object({
      address: z.string(),
      solanaAddress: z.string().nullable().describe('Null when no Solana address was given.'),
    })
    .describe('The arguments the steps ran with.'),
  steps: z
    .array(
      z.object({
        ok: z.boolean().describe('Whether this step succeeded; steps succeed or fail independently.'),
        slug: z.enum(STEP_SLUGS).describe('Step identifier.'),
        result: z
          .record(z.string(), z.unknown())
          .describe('Step output: balances, gas prices and fee estimate, or onramp link; an error message when ok is false.'),
      }),
    )
    .describe('One entry per step, in the order wallet-balances, gas-snapshot, onramp-link.'),
  summary: z.string().describe('`<n>/<total> steps succeeded`.'),
});

/** Checks whether a wallet is ready to pay: balances, gas snapshot and a funding (onramp) link, in one call. */
export const walletReadiness = defineTool({
  name: 'wallet-readiness',
  title: 'Wallet readiness check',
  description:
    'Runs three checks for an EVM wallet in one paid call, each succeeding or failing on its own: ' +
    'wallet-balances (native and stablecoin balances across supported networks, plus Solana stablecoin balance ' +
    'when `solanaAddress` is given), gas-snapshot (current gas prices and the fee of a stablecoin transfer) and ' +
    'onramp-link (a link to buy USDC into the wallet). Read-only: nothing is sent from the wallet. Costs 50000 ' +
    'USDC units ($0.05) per call; $0.051 on Optimism; 500000 units ($0.05) on Stellar.' + NOT_YET_AVAILABLE_NOTE,
  group: 'tools',
  method: 'POST',
  path: '/api/skill/wallet-readiness',
  input: WalletReadinessInputSchema,
  output: WalletReadinessOutputSchema,
  price: { default: '50000', optimism: '51000', stellar: '500000' },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  handler: notYetAvailable('wallet-readiness'),
});
