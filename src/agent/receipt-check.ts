/**
 * Checking a seller's word: after a paid call the seller reported settled, the agent asks the payment's chain whether
 * its authorization was actually used (chain-check.ts), wherever the network table has an RPC URL for the network —
 * any seller, Tollbooth's own deployment included (one RPC read). The check runs in the background once the answer
 * is on its way, with a short bounded retry for a transaction not visible yet; `settled()` waits for the checks still
 * running (a CLI process before it exits, any agent before its store closes). The outcome is kept on the spend:
 * `confirmed`, or `not_seen` (flagged by `tollbooth spending` and `spending-history`; it stays counted, since the
 * seller may still settle it until it expires). A chain that cannot tell leaves the spend unmarked. The signed payment
 * stays on the spend until the chain confirms it, so a `not_seen` or unchecked spend is re-checked later (`recheck`:
 * at remote mode's start and every few minutes, and before `tollbooth spending` prints; bounded in count and time):
 * a settlement that landed late becomes `confirmed`. An authorization still unused past its expiry is not re-checked.
 */
import type { PaymentPayload } from '@x402/core/types';
import type { Logger } from '../shared/log.js';
import type { NetworkEntry } from '../shared/networks.js';
import type { ChainCheck, NewSpend, SpendLedger } from '../shared/spends.js';
import { authorizationState, type AuthorizationState } from './chain-check.js';
import { rpcUrlOf } from './networks.js';
import { fromStored, type SignedPayment } from './remote.js';

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

/** The waits of a check that keeps looking for `seconds` (AGENT_RECEIPT_CHECK_SECONDS): the default's shape, scaled. */
export function receiptCheckWaits(seconds: number): number[] {
  return DEFAULT_WAITS.map((ms) => (ms * seconds) / 7);
}
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

/** How much one round of re-checks may do: at most `max` spends, started within `withinMs`. */
export interface RecheckBounds {
  max: number;
  withinMs: number;
}

/** A round of re-checks at start, at each interval and before `tollbooth spending` prints: 20 spends, 10 s. */
export const RECHECK_BOUNDS: RecheckBounds = { max: 20, withinMs: 10_000 };

/** When a signed payment's authorization stops being valid (EIP-3009 `validBefore`, Permit2 `deadline`), in ms. */
function expiryOf(sent: SignedPayment): number | undefined {
  if (sent.protocol !== 'x402') return undefined;
  const inner = (sent.payload.payload ?? {}) as {
    authorization?: { validBefore?: unknown };
    permit2Authorization?: { deadline?: unknown };
  };
  const seconds = Number(inner.authorization?.validBefore ?? inner.permit2Authorization?.deadline);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined;
}

/**
 * The on-chain checks of success receipts an agent process started, awaited before it closes, and the re-checks of
 * earlier receipts the chain did not confirm yet (a settlement that landed after the check is found then).
 */
export class ReceiptChecks {
  private readonly running = new Set<Promise<unknown>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: ReceiptCheckDeps) {}

  /** Whether a settled spend's receipt is checked: checks on, a payment of its own, an RPC URL for its network. */
  checks(spend: Pick<NewSpend, 'kind' | 'network'>): boolean {
    // A batch-settlement voucher or deposit is no authorization of its own the chain can be asked about.
    return this.deps.enabled && spend.kind === undefined && rpcUrlOf(this.deps.networks, spend.network) !== undefined;
  }

  /** Starts checking, in the background, a payment its seller reported settled; nothing when off or no RPC is set. */
  schedule(spend: NewSpend, sent: SignedPayment): void {
    if (!this.checks(spend)) return;
    this.track(this.check(spend, sent, this.deps.waits ?? DEFAULT_WAITS));
  }

  /**
   * Re-checks, once each, settled spends the chain has not confirmed (`not_seen`, or never checked), within `bounds`;
   * a spend found used becomes `confirmed`. Resolves with how many were confirmed.
   */
  recheck(bounds: RecheckBounds = RECHECK_BOUNDS): Promise<number> {
    if (!this.deps.enabled) return Promise.resolve(0);
    const round = this.recheckRound(bounds).catch((err: Error) => {
      this.deps.log.warn('the on-chain re-check of receipts failed', { reason: err.message });
      return 0;
    });
    this.track(round);
    return round;
  }

  /** Re-checks now, then every `intervalMs` until `close` (remote mode); a round still running is not doubled. */
  recheckEvery(intervalMs: number, bounds: RecheckBounds = RECHECK_BOUNDS): void {
    if (!this.deps.enabled || this.timer) return;
    let round: Promise<number> | undefined;
    const run = () => {
      round ??= this.recheck(bounds).finally(() => (round = undefined));
    };
    run();
    this.timer = setInterval(run, intervalMs);
    this.timer.unref();
  }

  /** Resolves once every check started so far has ended (each is bounded by its tries and RPC timeouts). */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  /** Stops the periodic re-checks and waits for the checks still running. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.settled();
  }

  private track(work: Promise<unknown>): void {
    const run: Promise<unknown> = work
      .catch((err: Error) => this.deps.log.warn('the on-chain check of a receipt failed', { reason: err.message }))
      .finally(() => this.running.delete(run));
    this.running.add(run);
  }

  private async recheckRound(bounds: RecheckBounds): Promise<number> {
    const deadline = Date.now() + bounds.withinMs;
    let confirmed = 0;
    for (const spend of await this.deps.spends.spendsToRecheck(bounds.max)) {
      if (Date.now() >= deadline) break;
      if (!this.checks(spend) || spend.payload === undefined) continue;
      const check = await this.check(spend, fromStored(spend.payload), [0], spend.chainCheck);
      if (check === 'confirmed') confirmed++;
    }
    return confirmed;
  }

  private async check(
    spend: NewSpend,
    sent: SignedPayment,
    waits: readonly number[],
    before?: ChainCheck,
  ): Promise<ChainCheck | undefined> {
    const { spends, networks, log } = this.deps;
    let state: AuthorizationState = { type: 'unknown', why: 'not asked' };
    for (const wait of waits) {
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
      return undefined;
    }
    // An authorization unused past its expiry can never be settled: it is not re-checked again.
    const expiry = expiryOf(sent);
    await spends.setChainCheck(spend.id, check, check === 'not_seen' && expiry !== undefined && expiry < Date.now());
    if (check === 'not_seen' && before !== 'not_seen')
      log.warn('a seller reported a payment settled that the chain shows unused', about);
    if (check === 'confirmed' && before === 'not_seen')
      log.info('a payment the chain did not show at first is now confirmed', about);
    return check;
  }
}
