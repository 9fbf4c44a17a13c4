/**
 * What happens to the development placeholder pay-to addresses (DEV_PAY_TO): they are fine while nothing can settle
 * (a bare `npm start` shows prices), but money must never be sent to an address nobody controls. A family whose
 * payments can settle here (a facilitator URL or a settlement key) and whose pay-to is a placeholder is dropped from
 * the network table; EVM cannot be dropped (token-report, smm-order and transfers-evm are paid on Base), so then the
 * start is refused. In production every advertised family needs a real address and a facilitator URL or settlement
 * key that can settle it: a production server never shows prices it cannot collect.
 */
import type { NetworkEntry, NetworkFamily } from '../../shared/networks.js';

const PAY_TO_VARIABLE: Record<NetworkFamily, string> = {
  evm: 'PAY_TO_EVM',
  svm: 'PAY_TO_SOLANA',
  stellar: 'PAY_TO_STELLAR',
  algorand: 'PAY_TO_ALGORAND',
};

/** The inputs of {@link applyPayToPolicy}. */
export interface PayToFacts {
  production: boolean;
  networks: readonly NetworkEntry[];
  /** Families whose pay-to address is the development placeholder. */
  placeholders: readonly NetworkFamily[];
  /** Whether payments of a family can settle here (a facilitator URL or a settlement key is configured). */
  settles: (family: NetworkFamily) => boolean;
}

/** The network table after the policy, the placeholder families still advertised, and the families dropped. */
export interface PayToOutcome {
  networks: NetworkEntry[];
  placeholders: NetworkFamily[];
  dropped: NetworkFamily[];
}

/** Applies the placeholder pay-to rules; throws an Error naming the variable to set when the start must be refused. */
export function applyPayToPolicy(facts: PayToFacts): PayToOutcome {
  const advertised = (family: NetworkFamily, table: readonly NetworkEntry[]) => table.some((n) => n.family === family);
  const unsafe = facts.placeholders.filter((family) => advertised(family, facts.networks) && facts.settles(family));
  if (unsafe.includes('evm')) {
    throw new Error(
      'payments on EVM networks can settle (a facilitator or settlement key is configured) but PAY_TO_EVM is not set: ' +
        'they would go to a placeholder address nobody controls. Set PAY_TO_EVM to your own address.',
    );
  }
  const networks = facts.networks.filter((n) => !unsafe.includes(n.family));
  const placeholders = facts.placeholders.filter((family) => advertised(family, networks));
  if (facts.production) {
    const problems: string[] = [];
    if (placeholders.length > 0)
      problems.push(
        `NODE_ENV=production requires real pay-to addresses; set ${placeholders.map((f) => PAY_TO_VARIABLE[f]).join(', ')}.`,
      );
    const unsettled = FAMILIES.filter((f) => advertised(f, networks) && !placeholders.includes(f) && !facts.settles(f));
    if (unsettled.length > 0) problems.push(unsettledProblem(unsettled));
    if (problems.length > 0) throw new Error(problems.join('\n'));
  }
  return { networks, placeholders, dropped: unsafe };
}

const FAMILIES = Object.keys(PAY_TO_VARIABLE) as NetworkFamily[];

const FACILITATOR_VARIABLES: Record<NetworkFamily, string> = {
  evm: 'FACILITATOR_URL_EVM or FACILITATOR_EVM_PRIVATE_KEY',
  svm: 'FACILITATOR_URL_SOLANA or FACILITATOR_SOLANA_SECRET_KEY',
  stellar: 'FACILITATOR_URL_STELLAR or FACILITATOR_STELLAR_SECRET',
  algorand: 'FACILITATOR_URL_ALGORAND or FACILITATOR_ALGORAND_MNEMONIC',
};

/** Why a production start is refused when no facilitator or settlement key can settle some advertised families. */
export function unsettledProblem(families: readonly NetworkFamily[]): string {
  return (
    `NODE_ENV=production: no facilitator or settlement key can settle payments on ${families.join(', ')}; ` +
    'their prices would be shown while no payment on them could settle. ' +
    `Set FACILITATOR_URL (or ${families.map((f) => FACILITATOR_VARIABLES[f]).join('; ')}), ` +
    'or leave those families out of the network table (NETWORKS_JSON with replace: true).'
  );
}

/** The variable that sets a family's pay-to address. */
export function payToVariable(family: NetworkFamily): string {
  return PAY_TO_VARIABLE[family];
}
