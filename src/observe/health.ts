import { performance } from 'node:perf_hooks';
import type { Express } from 'express';
import type { Config } from '../config/config.js';
import { scrubUrlCredentials } from '../shared/log.js';
import { UNASKED, type ChallengeBook } from '../payments/challenges/requirements.js';
import type { Facilitator } from '../payments/facilitators/facilitator.js';
import {
  droppedOptions,
  facilitatorFailure,
  facilitatorName,
  optionLabel,
  theFacilitator,
  unsettleable,
  unsettledFamilies,
  type SupportedKinds,
} from '../payments/facilitators/facilitator-support.js';
import type { NetworkFamily } from '../shared/networks.js';
import type { Store } from '../store/store.js';
import { VERSION } from '../shared/version.js';

/** One readiness check: whether it passed, how long it took (ms), and why it failed. */
export interface CheckResult {
  ok: boolean;
  ms: number;
  error?: string;
  [detail: string]: unknown;
}

/** The answer of `GET /readyz`. */
export interface Readiness {
  status: 'ready' | 'not_ready';
  checks: Record<string, CheckResult>;
  /** Advertised families no facilitator or settlement key serves (not ready in production; a note in development). */
  cannotSettle?: { families: NetworkFamily[]; reason: string };
}

/** How long each readiness check may take before it counts as failed. */
export const READINESS_TIMEOUT_MS = 3_000;

function withinTime<T>(work: () => Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([Promise.resolve().then(work), late]).finally(() => clearTimeout(timer));
}

async function timed(work: () => Promise<Record<string, unknown>>, ms: number, what: string): Promise<CheckResult> {
  const start = performance.now();
  const elapsed = () => Math.round(performance.now() - start);
  try {
    const details = await withinTime(work, ms, what);
    return { ok: true, ms: elapsed(), ...details };
  } catch (err) {
    const message = String((err as Error)?.message ?? err)
      .split('\n', 1)[0]!
      .slice(0, 200);
    return { ok: false, ms: elapsed(), error: scrubUrlCredentials(message) };
  }
}

/** Asks one facilitator for `/supported` within the time limit; a failure names the facilitator (and a refusal of our credentials). */
async function askSupported(
  ask: () => Promise<{ kinds: SupportedKinds }>,
  shown: string,
  ms: number,
): Promise<{ check: CheckResult; kinds?: SupportedKinds }> {
  let kinds: SupportedKinds | undefined;
  const check = await timed(
    async () => {
      try {
        kinds = (await ask()).kinds;
      } catch (err) {
        throw new Error(facilitatorFailure(err, shown), { cause: err });
      }
      return { kinds: kinds.length };
    },
    ms,
    'the facilitator',
  );
  return { check, ...(kinds ? { kinds } : {}) };
}

/**
 * Checks that the store takes a write (`probeWrite()`: a row written and deleted) and that every configured facilitator
 * answers `getSupported()` (its `/supported`), each within `timeoutMs`; families sharing one facilitator are asked
 * once. With `config`, a family is ready only when its facilitator lists every option still advertised on its networks
 * (`unsupported` names the others; `dropped` names those start-up's challenge `book` withholds), and `cannotSettle` names advertised
 * families without any facilitator (in production they make the answer not ready).
 */
export async function checkReadiness(
  store: Store,
  facilitator: Facilitator,
  timeoutMs = READINESS_TIMEOUT_MS,
  config?: Config,
  book: ChallengeBook = UNASKED,
): Promise<Readiness> {
  const asked = new Map<unknown, ReturnType<typeof askSupported>>();
  const families = Object.entries(facilitator.clients) as Array<
    [NetworkFamily, NonNullable<Facilitator['clients'][NetworkFamily]>]
  >;
  const facilitatorChecks = families.map(async ([family, client]) => {
    const shown = facilitatorName(facilitator, family);
    let answer = asked.get(client);
    if (!answer) {
      answer = askSupported(() => client.getSupported(), shown, timeoutMs);
      asked.set(client, answer);
    }
    const { check, kinds } = await answer;
    const result: CheckResult = { ...check, mode: facilitator.modes[family], facilitator: shown };
    if (config) {
      const dropped = droppedOptions(config, family, book).map(optionLabel);
      if (dropped.length > 0) result.dropped = dropped;
      const unsupported = kinds ? unsettleable(config, family, kinds, book).map(optionLabel) : [];
      if (unsupported.length > 0) {
        Object.assign(result, {
          ok: false,
          unsupported,
          error: `${theFacilitator(shown)} does not list ${unsupported.length} advertised option(s) in /supported: ${unsupported.slice(0, 3).join(', ')}${unsupported.length > 3 ? ', …' : ''}`,
        });
      }
    }
    return [`facilitator:${family}`, result] as const;
  });
  const [storeCheck, ...rest] = await Promise.all([
    timed(async () => (await store.probeWrite(), { probe: 'write' }), timeoutMs, 'the store').then(
      (r) => ['store', r] as const,
    ),
    ...facilitatorChecks,
  ]);
  const checks: Record<string, CheckResult> = Object.fromEntries([storeCheck, ...rest]);
  const unsettled = config ? unsettledFamilies(config) : [];
  const ready = Object.values(checks).every((c) => c.ok) && !(config?.production && unsettled.length > 0);
  return {
    status: ready ? 'ready' : 'not_ready',
    checks,
    ...(unsettled.length > 0
      ? { cannotSettle: { families: unsettled, reason: 'no facilitator URL or settlement key is configured for them' } }
      : {}),
  };
}

/** Mounts `GET /healthz` (the process is alive: version, pay-to and facilitator modes) and `GET /readyz` (200 ready / 503 not). */
export function mountHealth(
  app: Express,
  config: Config,
  store: Store,
  facilitator: Facilitator,
  book: ChallengeBook,
): void {
  app.get('/healthz', (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.json({
      status: 'ok',
      version: VERSION,
      devPayTo: config.devPayTo,
      facilitator: facilitator.mode,
      facilitators: facilitator.modes,
    });
  });
  app.get('/readyz', (_req, res, next) => {
    checkReadiness(store, facilitator, READINESS_TIMEOUT_MS, config, book).then((readiness) => {
      res.setHeader('Cache-Control', 'no-store');
      res.status(readiness.status === 'ready' ? 200 : 503).json(readiness);
    }, next);
  });
}
