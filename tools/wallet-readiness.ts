import { z } from 'zod';
import { EvmAddressSchema, SolanaAddressSchema } from '../schemas/common.js';
import { ToolError } from '../src/shared/errors.js';
import { describeFailure, stablecoinTotal } from '../src/providers/chain/wallet-report.js';
import { defineTool, type ToolContext } from '../src/tool/tool.js';

const STEP_SLUGS = ['wallet-balances', 'gas-snapshot', 'onramp-link'] as const;
type Slug = (typeof STEP_SLUGS)[number];

/** The steps that read the chains; when neither succeeds the call fails. */
const CHAIN_STEPS: readonly Slug[] = ['wallet-balances', 'gas-snapshot'];

const WalletReadinessInputSchema = () =>
  z.object({
    address: EvmAddressSchema.describe('EVM wallet address (0x + 40 hex digits) to check.'),
    solanaAddress: SolanaAddressSchema.optional().describe(
      'Optional base58 Solana address; adds its stablecoin balance to the wallet-balances step.',
    ),
  });

const WalletReadinessOutputSchema = () =>
  z.object({
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
            .describe(
              'Step output. wallet-balances: {networks: [{network, label, ok, family, address, native: {symbol, decimals, raw, formatted}, ' +
                'stablecoin: {symbol, decimals, raw, formatted, token}} or {network, label, ok: false, error: {code, message}}], stablecoinTotalUsd}. ' +
                'gas-snapshot: {networks: [{network, label, ok, gasPriceWei, gasPriceGwei, stablecoinTransfer: {gas, fee: {symbol, decimals, raw, formatted}}}]}. ' +
                'onramp-link: {url, provider, network, asset, expiresInSeconds}. A failed step: {error, code} (plus the per-network entries when there were any).',
            ),
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
    'onramp-link (a single-use link to buy USDC on Base into the wallet). The call is charged when wallet-balances or ' +
    'gas-snapshot succeeded; when both fail it fails and nothing is charged. Read-only: nothing is sent from the wallet.',
  group: 'tools',
  method: 'POST',
  path: '/api/skill/wallet-readiness',
  input: WalletReadinessInputSchema,
  output: WalletReadinessOutputSchema,
  pricing: { usd: '0.05', accepts: 'every-network' },
  example: { address: '0x000000000000000000000000000000000000dEaD' },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  handler: async ({ address, solanaAddress }, ctx) => {
    const { wallet, onramp } = ctx.providers;
    let done = 0;
    const finished = (step: Step) => {
      done += 1;
      ctx.progress(done, STEP_SLUGS.length, `${step.slug} ${step.ok ? 'succeeded' : 'failed'}`);
      return step;
    };
    ctx.progress(0, STEP_SLUGS.length, 'running wallet-balances, gas-snapshot and onramp-link');
    const run = (slug: Slug, work: (signal: AbortSignal) => Promise<Outcome>) =>
      runStep(slug, wallet.stepTimeoutMs, ctx, work).then(finished);
    const steps = await Promise.all([
      run('wallet-balances', async (signal) => {
        const networks = await wallet.balances(address, solanaAddress, signal);
        const ok = networks.some((n) => n.ok);
        return {
          ok,
          result: ok ? { networks, stablecoinTotalUsd: stablecoinTotal(networks) } : noNetwork('balance', networks),
        };
      }),
      run('gas-snapshot', async (signal) => {
        const networks = await wallet.gas(signal);
        const ok = networks.some((n) => n.ok);
        return { ok, result: ok ? { networks } : noNetwork('gas price', networks) };
      }),
      run('onramp-link', async (signal) => ({ ok: true, result: { ...(await onramp.link(address, signal)) } })),
    ]);
    if (ctx.signal.aborted) throw new ToolError('cancelled', 'The call was cancelled before it finished.');
    failWhenNoChainStep(steps);
    return {
      pack: 'wallet-readiness',
      args: { address, solanaAddress: solanaAddress ?? null },
      steps,
      summary: `${steps.filter((s) => s.ok).length}/${steps.length} steps succeeded`,
    };
  },
});

interface Outcome {
  ok: boolean;
  result: Record<string, unknown>;
}

interface Step extends Outcome {
  slug: Slug;
}

function noNetwork(
  what: string,
  networks: Array<{ ok: boolean; error?: { code: string; message: string } }>,
): Record<string, unknown> {
  const errors = networks.flatMap((n) => (n.ok || !n.error ? [] : [n.error]));
  const code =
    errors.length > 0 && errors.every((e) => e.code === 'upstream_timeout')
      ? 'upstream_timeout'
      : 'upstream_unavailable';
  const error =
    networks.length === 0
      ? `No network is configured for this step.`
      : `No network answered the ${what} read (${errors[0]?.message ?? 'no answer'}).`;
  return { error, code, networks };
}

/** Runs one step under its own time limit; its failure (or timeout) becomes a failed step, never a failed call. */
async function runStep(
  slug: Slug,
  timeoutMs: number,
  ctx: ToolContext,
  work: (signal: AbortSignal) => Promise<Outcome>,
): Promise<Step> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([ctx.signal, timeout]);
  try {
    const outcome = await new Promise<Outcome>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      work(signal)
        .then(resolve, reject)
        .finally(() => signal.removeEventListener('abort', onAbort));
    });
    return { slug, ...outcome };
  } catch (err) {
    if (timeout.aborted && !ctx.signal.aborted) {
      return {
        slug,
        ok: false,
        result: { error: `The step did not finish within ${timeoutMs} ms.`, code: 'upstream_timeout' },
      };
    }
    const { code, message } = describeFailure(err);
    ctx.log.warn('wallet-readiness step failed', { step: slug, code });
    return { slug, ok: false, result: { error: message, code } };
  }
}

/** The failure rule: the call fails (and settles nothing) when no chain step succeeded, whatever onramp-link did. */
function failWhenNoChainStep(steps: Step[]): void {
  const chain = steps.filter((s) => CHAIN_STEPS.includes(s.slug));
  if (chain.some((s) => s.ok)) return;
  const codes = chain.map((s) => String(s.result.code));
  const code = codes.every((c) => c === 'upstream_timeout') ? 'upstream_timeout' : 'upstream_unavailable';
  const reasons = chain.map((s) => `${s.slug}: ${String(s.result.code)}`).join(', ');
  throw new ToolError(
    code,
    `No chain could be read (${reasons}; see details.steps), so there is no readiness report. Try again in a minute.`,
    {
      details: { steps },
    },
  );
}
