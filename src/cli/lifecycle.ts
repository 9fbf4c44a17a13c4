import type { Config } from '../config/config.js';
import type { Logger } from '../shared/log.js';
import { unsettledFamilies } from '../payments/facilitators/facilitator-support.js';
import { payToVariable } from '../payments/reading/pay-to.js';
import { advertisedOptions, type ChallengeBook } from '../payments/challenges/requirements.js';
import { UNCAUGHT_EXCEPTION } from '../runtime/process-policy.js';

/** Warns when payments would go to the development placeholder addresses, or when a family has no facilitator. */
export function warnDevelopment(config: Config, log: Logger): void {
  if (config.devPayTo.length > 0) {
    log.warn(
      `DEVELOPMENT PAY-TO ADDRESSES IN USE: these prices are shown, but no payment on them can settle. Set ${config.devPayTo.map(payToVariable).join(', ')} (and a facilitator) before taking real payments.`,
      { families: config.devPayTo },
    );
  }
  // Real pay-to addresses but nothing to settle with: prices are shown that no payment can buy (refused in production).
  const unsettled = unsettledFamilies(config).filter((family) => !config.devPayTo.includes(family));
  if (unsettled.length > 0) {
    log.warn(
      `NO FACILITATOR FOR ${unsettled.join(', ')}: their prices are shown, but no payment on them can settle. Set FACILITATOR_URL (or FACILITATOR_URL_<FAMILY>) or a settlement key; with NODE_ENV=production the start is refused.`,
      { families: unsettled },
    );
  }
  if (config.droppedFamilies.length > 0) {
    log.warn(
      `not advertising ${config.droppedFamilies.join(', ')}: a facilitator could settle these payments, but their pay-to address is a placeholder nobody controls. Set ${config.droppedFamilies.map(payToVariable).join(', ')} to sell there.`,
      { families: config.droppedFamilies },
    );
  }
}

/** The networks a start offers: those with a payment option left after start-up's challenge `book` withheld some. */
export function offeredNetworks(config: Config, book: ChallengeBook): string[] {
  const offered = new Set(
    advertisedOptions(config)
      .filter((o) => !book.withheld.has(o.key))
      .map((o) => o.networkId),
  );
  return config.networks.map((n) => n.id).filter((id) => offered.has(id));
}

/**
 * Runs `stop` once on the first SIGTERM/SIGINT (or other trigger); a second signal while it runs exits at once with 1.
 * A stop after an uncaught exception exits with 1 even when it was clean.
 */
export function onStop(log: Logger, stop: (why: string) => Promise<boolean>): (why: string) => void {
  let stopping = false;
  return (why) => {
    if (stopping) {
      if (why === 'SIGTERM' || why === 'SIGINT') {
        log.warn('second signal during shutdown: exiting now', { signal: why });
        process.exit(1);
      }
      return;
    }
    stopping = true;
    stop(why).then(
      (clean) => process.exit(clean && why !== UNCAUGHT_EXCEPTION ? 0 : 1),
      (err: unknown) => {
        log.error('shutdown failed', { error: String((err as Error)?.stack ?? err) });
        process.exit(1);
      },
    );
  };
}

/** Calls `stop` on SIGTERM and SIGINT. */
export function stopOnSignals(stop: (why: string) => void): void {
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
