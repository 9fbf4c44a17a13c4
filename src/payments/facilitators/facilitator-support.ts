/**
 * Advertise only what can settle: each network family's advertised payment options compared with the `kinds` its
 * facilitator lists at `/supported` (remote facilitators over HTTP, the in-process one with what its rails registered).
 * At start-up an option nobody can settle is withheld from every challenge with a warning, or the start is refused
 * (FACILITATOR_UNSUPPORTED=drop|refuse); `/readyz` repeats the comparison (src/observe/health.ts).
 */
import type { SupportedResponse } from '@x402/core/types';
import type { Config } from '../../config/config.js';
import type { Logger } from '../../shared/log.js';
import type { AnyPaidToolDefinition } from '../../tool/tool.js';
import type { Facilitator } from './facilitator.js';
import { algorandAddressProblem, solanaAddressProblem } from '../reading/address-format.js';
import { FacilitatorAuthError } from './facilitator-http.js';
import type { NetworkFamily } from '../../shared/networks.js';
import { DEV_FEE_PAYER } from '../../config/env.js';
import { acceptsFor, advertisedOptions, type ChallengeBook, type PaymentOption } from '../challenges/requirements.js';

/** The `kinds` of a `/supported` answer. */
export type SupportedKinds = SupportedResponse['kinds'];

/** An option as an operator reads it: `exact on eip155:137`, `exact on base (x402 v1)`. */
export function optionLabel(option: PaymentOption): string {
  return `${option.scheme} on ${option.network}${option.x402Version === 1 ? ' (x402 v1)' : ''}`;
}

/** Whether `kinds` lists an option: same version, scheme and network (a `<namespace>:*` network covers its namespace). */
export function covers(kinds: SupportedKinds, option: PaymentOption): boolean {
  return kinds.some((kind) => {
    if (kind.x402Version !== option.x402Version || kind.scheme !== option.scheme) return false;
    if (kind.network === option.network) return true;
    return kind.network.endsWith(':*') && option.network.startsWith(kind.network.slice(0, -1));
  });
}

/** The options a family's facilitator must settle: every advertised option on the family's networks. */
export function familyOptions(config: Config, family: NetworkFamily): PaymentOption[] {
  const familyOf = (id: string) => config.networks.find((n) => n.id === id)?.family;
  return advertisedOptions(config).filter((option) => familyOf(option.networkId) === family);
}

/** The options of a family that are still advertised (not withheld by `book`) and that `kinds` does not list. */
export function unsettleable(
  config: Config,
  family: NetworkFamily,
  kinds: SupportedKinds,
  book: ChallengeBook,
): PaymentOption[] {
  return familyOptions(config, family).filter((option) => !book.withheld.has(option.key) && !covers(kinds, option));
}

/**
 * The advertised families that no facilitator URL or settlement key serves: their prices are shown, but no payment on
 * them can settle (development pay-to placeholders included). A production start with such a family is refused.
 */
export function unsettledFamilies(config: Pick<Config, 'networks' | 'facilitator'>): NetworkFamily[] {
  const families = [...new Set(config.networks.map((n) => n.family))];
  return families.filter((f) => !config.facilitator.keys[f] && !config.facilitator.urls[f]);
}

/** The options of a family start-up withheld (`book`). */
export function droppedOptions(config: Config, family: NetworkFamily, book: ChallengeBook): PaymentOption[] {
  return familyOptions(config, family).filter((option) => book.withheld.has(option.key));
}

/** A facilitator named in a sentence: `the facilitator https://…`, or `the in-process facilitator`. */
export function theFacilitator(name: string): string {
  return name === 'in-process' ? 'the in-process facilitator' : `the facilitator ${name}`;
}

/** Why asking a facilitator failed, naming it: a refusal of our credentials is said as such; never a header value. */
export function facilitatorFailure(err: unknown, name: string): string {
  const first = String((err as Error)?.message ?? err).split('\n', 1)[0]!;
  // A refusal of our credentials already names the facilitator (its origin and path).
  if (err instanceof FacilitatorAuthError) return first;
  return `${theFacilitator(name)} could not be asked for /supported: ${first}`;
}

/** The families that have a facilitator, grouped by the client serving them (a shared facilitator is asked once). */
function byClient(
  facilitator: Facilitator,
): Array<{ families: NetworkFamily[]; ask: () => Promise<SupportedResponse> }> {
  const groups = new Map<unknown, { families: NetworkFamily[]; ask: () => Promise<SupportedResponse> }>();
  for (const [family, client] of Object.entries(facilitator.clients) as Array<
    [NetworkFamily, NonNullable<Facilitator['clients'][NetworkFamily]>]
  >) {
    const group = groups.get(client) ?? { families: [], ask: () => client.getSupported() };
    group.families.push(family);
    groups.set(client, group);
  }
  return [...groups.values()];
}

/** The name of a family's facilitator in messages: its URL, or "the in-process facilitator". */
export function facilitatorName(facilitator: Facilitator, family: NetworkFamily): string {
  return facilitator.shown[family] ?? 'in-process';
}

/** The address checks a fee payer listed at `/supported` must pass before it is published (length and checksum). */
const FEE_PAYER_FORMAT: Partial<Record<NetworkFamily, (address: string) => string | undefined>> = {
  svm: solanaAddressProblem,
  algorand: algorandAddressProblem,
};

/**
 * Solana and Algorand payments are co-signed by the facilitator's fee payer, which each challenge names. When the
 * operator configured none (SOLANA_FEE_PAYER / ALGORAND_FEE_PAYER, or a settlement key), the fee payer a remote
 * facilitator lists for a network at `/supported` (`extra.feePayer`) is published, so e.g. Solana devnet through the
 * public testnet facilitator works without looking it up by hand.
 */
export function adoptFeePayers(
  config: Config,
  families: readonly NetworkFamily[],
  kinds: SupportedKinds,
  log: Logger,
  feePayers: Map<string, string>,
): void {
  for (const family of families) {
    const format = FEE_PAYER_FORMAT[family];
    const placeholder =
      family === 'svm' ? DEV_FEE_PAYER.svm : family === 'algorand' ? DEV_FEE_PAYER.algorand : undefined;
    if (!format || config.signers[family as 'svm' | 'algorand'] !== placeholder || config.facilitator.keys[family])
      continue;
    for (const net of config.networks.filter((n) => n.family === family)) {
      const feePayer = kinds.find((k) => k.network === net.id && typeof k.extra?.feePayer === 'string')?.extra
        ?.feePayer;
      if (typeof feePayer !== 'string' || format(feePayer) !== undefined) continue;
      feePayers.set(net.id, feePayer);
      log.info('publishing the fee payer the facilitator lists at /supported', { network: net.id, feePayer });
    }
  }
}

/**
 * Start-up: asks each facilitator for `/supported` and returns the challenge book: the options it does not list
 * withheld (a warning names them), the fee payers it lists adopted; or, with FACILITATOR_UNSUPPORTED=refuse, throws
 * naming them (also when a facilitator cannot be asked). A facilitator that cannot be asked in drop mode is logged and
 * its options stay advertised (`/readyz` reports it not ready).
 */
export async function settleableOnly(
  config: Config,
  facilitator: Facilitator,
  log: Logger,
  tools: readonly AnyPaidToolDefinition[],
): Promise<ChallengeBook> {
  const refuse = config.facilitator.unsupported === 'refuse';
  const problems: string[] = [];
  const withheld = new Set<string>();
  const feePayers = new Map<string, string>();
  const book: ChallengeBook = { withheld, feePayers };
  await Promise.all(
    byClient(facilitator).map(async ({ families, ask }) => {
      let kinds: SupportedKinds;
      try {
        kinds = (await ask()).kinds;
      } catch (err) {
        for (const family of families) {
          const message = facilitatorFailure(err, facilitatorName(facilitator, family));
          problems.push(`${family}: ${message}`);
          const fields = { family, facilitator: facilitatorName(facilitator, family), error: message };
          if (!refuse)
            log[err instanceof FacilitatorAuthError ? 'error' : 'warn'](
              'could not compare the advertised payment options with the facilitator; they stay advertised',
              fields,
            );
        }
        return;
      }
      adoptFeePayers(config, families, kinds, log, feePayers);
      for (const family of families) {
        const missing = unsettleable(config, family, kinds, book);
        if (missing.length === 0) continue;
        const options = missing.map(optionLabel);
        problems.push(
          `${family}: ${theFacilitator(facilitatorName(facilitator, family))} cannot settle ${options.join(', ')}`,
        );
        if (refuse) continue;
        for (const option of missing) withheld.add(option.key);
        log.warn(
          'payment options dropped: the facilitator does not list them in /supported (FACILITATOR_UNSUPPORTED=drop)',
          { family, facilitator: facilitatorName(facilitator, family), options },
        );
      }
    }),
  );
  if (refuse && problems.length > 0) {
    throw new Error(
      `FACILITATOR_UNSUPPORTED=refuse: not every advertised payment option can be settled:\n- ${problems.join('\n- ')}`,
    );
  }
  const unpayable = tools.filter((tool) => acceptsFor(config, tool, book).length === 0).map((tool) => tool.name);
  if (unpayable.length > 0)
    log.warn('tools left without any payment option: their calls cannot be paid', { tools: unpayable });
  return book;
}
