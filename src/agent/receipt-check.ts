/**
 * Checking a seller's word: after a paid call the seller reported settled, the agent asks the payment's chain whether
 * its authorization was actually used (chain-check.ts), wherever the network table has an RPC URL for the network —
 * any seller, Tollbooth's own deployment included (one RPC read). The check runs in the background once the answer
 * is on its way, with a short bounded retry for a transaction not visible yet; `settled()` waits for the checks still
 * running (a CLI process before it exits, any agent before its store closes). The outcome is kept on the spend:
 * `confirmed`, or `not_seen` (flagged by `tollbooth spending` and `spending-history`; it stays counted, since the
 * seller may still settle it until it expires). A chain that cannot tell leaves the spend unmarked.
 */
import type { PaymentPayload } from '@x402/core/types';
import type { Logger } from '../shared/log.js';
import type { NetworkEntry } from '../shared/networks.js';
import type { ChainCheck, NewSpend, SpendLedger } from '../shared/spends.js';
import { authorizationState, type AuthorizationState } from './chain-check.js';
import { rpcUrlOf } from './networks.js';
import type { SignedPayment } from './remote.js';

/** What the chain check looks up: an MPP credential's authorization in the x402 shape it reads. */
export function forChainCheck(payment: SignedPayment): PaymentPayload {
  return payment.protocol === 'x402'
    ? payment.payload
    : ({
        x402Version: 2,
        payload: { authorization: { from: payment.from, nonce: payment.nonce } },
      } as unknown as PaymentPayload);
}

/** The sentence a spend the chain does not confirm is shown with (`tollbooth spending`, `spending-history`). */
export const NOT_SEEN_WARNING =
  'The seller said this payment was settled, but the chain shows its authorization unused: no money has moved. It stays counted against the budget because the seller may still settle it until the authorization expires.';

/** Milliseconds waited before each try: at once, then a few seconds for a transaction not visible yet. */
const DEFAULT_WAITS: readonly number[] = [0, 1_000, 2_000, 4_000];
/** Upper bound on one RPC request of a check. */
const CHECK_TIMEOUT_MS = 10_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What the checks run on. */
export interface ReceiptCheckDeps {
  spends: SpendLedger;
  networks: readonly NetworkEntry[];
  log: Logger;
  /** AGENT_CHECK_RECEIPTS (on unless `off`). */
  enabled: boolean;
  /** The waits before each try (tests may shorten them); default 0, 1 s, 2 s, 4 s. */
  waits?: readonly number[];
}

/** The on-chain checks of success receipts an agent process started, awaited before it closes. */
export class ReceiptChecks {
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly deps: ReceiptCheckDeps) {}

  /** Starts checking, in the background, a payment its seller reported settled; nothing when off or no RPC is set. */
  schedule(spend: NewSpend, sent: SignedPayment): void {
    const { enabled, networks, log } = this.deps;
    // A batch-settlement voucher or deposit is no authorization of its own the chain can be asked about.
    if (!enabled || spend.kind !== undefined || !rpcUrlOf(networks, spend.network)) return;
    const run: Promise<void> = this.check(spend, sent)
      .catch((err: Error) => log.warn('the on-chain check of a receipt failed', { reason: err.message }))
      .finally(() => this.running.delete(run));
    this.running.add(run);
  }

  /** Resolves once every check started so far has ended (each is bounded by its tries and RPC timeouts). */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  private async check(spend: NewSpend, sent: SignedPayment): Promise<void> {
    const { spends, networks, log } = this.deps;
    let state: AuthorizationState = { type: 'unknown', why: 'not asked' };
    for (const wait of this.deps.waits ?? DEFAULT_WAITS) {
      await sleep(wait);
      const paid = { network: spend.network, asset: spend.asset };
      state = await authorizationState(forChainCheck(sent), paid, networks, CHECK_TIMEOUT_MS);
      if (state.type === 'used') break;
    }
    const check: ChainCheck | undefined =
      state.type === 'used' ? 'confirmed' : state.type === 'unused' ? 'not_seen' : undefined;
    const about = { tool: spend.tool, origin: spend.origin, network: spend.network, spend: spend.id };
    if (check === undefined) {
      log.info('the chain could not confirm a settled receipt', { ...about, why: (state as { why?: string }).why });
      return;
    }
    await spends.setChainCheck(spend.id, check);
    if (check === 'not_seen') log.warn('a seller reported a payment settled that the chain shows unused', about);
  }
}
