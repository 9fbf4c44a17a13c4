import { z } from 'zod';
import { EvmAddressSchema, SolanaAddressSchema } from '../schemas/common.js';
import { ToolError } from '../src/shared/errors.js';
import { defineTool, type ToolContext } from '../src/tool/tool.js';

const TOKENS = ['usdc', 'eth', 'sol'] as const;
const NETWORKS = ['base-sepolia', 'solana-devnet'] as const;

/** Drips one address may receive per UTC day, whatever the token (docs/spec-notes.md#limits). */
export const DRIPS_PER_DAY = 2;

/** The only network each native token can be dripped on. */
const NATIVE_TOKEN_NETWORK = { eth: 'base-sepolia', sol: 'solana-devnet' } as const;

const TestnetFundInputSchema = () =>
  z
    .object({
      address: z
        .string()
        .trim()
        .min(1)
        .max(64)
        .describe(
          'Recipient address on the chosen network: a 0x-prefixed EVM address for base-sepolia, ' +
            'a base58 Solana address for solana-devnet.',
        ),
      token: z
        .enum(TOKENS)
        .default('usdc')
        .describe(
          'Token to receive: `usdc` (default, 1 USDC), `eth` (0.0001 ETH, base-sepolia only) or `sol` (solana-devnet only).',
        ),
      network: z
        .enum(NETWORKS)
        .default('base-sepolia')
        .describe('Test network: `base-sepolia` (default) or `solana-devnet`.'),
    })
    .superRefine((input, ctx) => {
      const { address, token, network } = input;
      if (typeof address === 'string' && (network === 'base-sepolia' || network === 'solana-devnet')) {
        const ok =
          network === 'base-sepolia'
            ? EvmAddressSchema.safeParse(address).success
            : SolanaAddressSchema.safeParse(address).success;
        if (!ok) {
          ctx.addIssue({
            code: 'custom',
            path: ['address'],
            message:
              network === 'base-sepolia'
                ? 'address must be a 0x-prefixed 40-hex-digit EVM address for network base-sepolia (for a Solana address, set network to solana-devnet).'
                : 'address must be a base58 Solana address for network solana-devnet (for an EVM address, set network to base-sepolia).',
          });
        }
      }
      if (token === 'eth' || token === 'sol') {
        const required = NATIVE_TOKEN_NETWORK[token];
        if (network !== required) {
          ctx.addIssue({
            code: 'custom',
            path: ['token'],
            message: `token ${token} is only available on network ${required}; use token usdc on ${network} or set network to ${required}.`,
          });
        }
      }
    });

const TestnetFundOutputSchema = () =>
  z.object({
    funded: z.boolean().describe('True when the drip transaction was submitted.'),
    network: z.enum(NETWORKS).describe('Network the funds were sent on.'),
    token: z.enum(TOKENS).describe('Token that was sent.'),
    transactionHash: z.string().describe('EVM transaction hash or Solana transaction signature of the drip.'),
    explorer: z.string().describe('Block-explorer URL of the transaction.'),
  });

/** Sends a small test-network drip (USDC, ETH or SOL) to an address on Base Sepolia or Solana devnet. */
export const testnetFund = defineTool({
  name: 'testnet-fund',
  title: 'Testnet faucet',
  description:
    'Sends test funds to your address: 1 test USDC (default) or 0.0001 ETH on Base Sepolia, or test USDC or SOL ' +
    'on Solana devnet, and returns the transaction hash and explorer link. The address must match `network` ' +
    '(0x… for base-sepolia, base58 for solana-devnet). At most 2 drips per address per day, plus the faucet ' +
    "provider's rolling caps; a refused or failed drip is not charged. Test funds have no market value.",
  group: 'tools',
  method: 'POST',
  path: '/api/testnet-fund',
  input: TestnetFundInputSchema,
  output: TestnetFundOutputSchema,
  pricing: { usd: '0.001', accepts: 'every-network' },
  example: { address: '0x000000000000000000000000000000000000dEaD', token: 'usdc', network: 'base-sepolia' },
  annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: true, destructiveHint: false },
  needs: ({ network }, providers) => providers.faucet.unconfigured(network),
  handler: async ({ address, token, network }, ctx) => {
    // EVM addresses are case-insensitive (checksum-tolerant): one address counts once, however it is written.
    // Solana's base58 is case-sensitive and is kept as given. (viem loads with the first call that needs it.)
    const recipient = network === 'base-sepolia' ? (await import('viem')).getAddress(address.toLowerCase()) : address;
    const subject = `${network}:${network === 'base-sepolia' ? recipient.toLowerCase() : recipient}`;
    const day = new Date().toISOString().slice(0, 10);
    await takeDrip(ctx, subject, day);
    try {
      const drip = await ctx.providers.faucet.drip({ network, token, address: recipient }, ctx.signal);
      return { funded: true, network, token, transactionHash: drip.transactionHash, explorer: drip.explorer };
    } catch (err) {
      // Nothing was sent: the drip goes back, and the pipeline settles nothing.
      await ctx.store.releaseDrip(subject, day);
      throw err;
    }
  },
});

/** Claims one of the address's drips for today in the store (atomic), or refuses with 429 when both are used. */
async function takeDrip(ctx: ToolContext, subject: string, day: string): Promise<void> {
  const claim = await ctx.store.claimDrip(subject, day, DRIPS_PER_DAY);
  switch (claim.type) {
    case 'granted':
      return;
    case 'limit_reached': {
      const midnight = Date.parse(`${day}T00:00:00Z`) + 86_400_000;
      throw new ToolError(
        'rate_limited',
        `This address already received ${DRIPS_PER_DAY} drips today (the limit is ${DRIPS_PER_DAY} per address per UTC day). Try again after ${new Date(midnight).toISOString()}.`,
        {
          field: 'address',
          details: { limit: DRIPS_PER_DAY, retryAfterSeconds: Math.max(1, Math.ceil((midnight - Date.now()) / 1000)) },
        },
      );
    }
  }
}
