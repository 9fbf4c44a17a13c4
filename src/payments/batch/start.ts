/**
 * Start-up of the seller's batch settlement (BATCH_SETTLEMENT=on): the EVM facilitator's `/supported` says where the
 * scheme can be settled and which receiver-authorizer it offers; the official server scheme builds the entries there.
 * Off, nothing is loaded and the challenges are byte for byte what they were.
 */
import type { Config } from '../../config/config.js';
import type { Logger } from '../../shared/log.js';
import type { Store } from '../../store/store.js';
import type { AnyPaidToolDefinition } from '../../tool/tool.js';
import type { Facilitator } from '../facilitators/facilitator.js';
import type { BatchSeller } from './seller.js';

/** The seller's batch schemes on the store's channels, or undefined when off or when nothing can be offered (logged). */
export async function startBatchSeller(
  config: Config,
  facilitator: Facilitator,
  store: Store,
  tools: readonly AnyPaidToolDefinition[],
  log: Logger,
): Promise<BatchSeller | undefined> {
  if (!config.batch.enabled) return undefined;
  const client = facilitator.clients.evm;
  if (!client || !store.channels) {
    log.warn(
      'BATCH_SETTLEMENT=on but batch settlement cannot be offered: no EVM facilitator URL, or a store without channels',
    );
    return undefined;
  }
  let kinds;
  try {
    kinds = (await client.getSupported()).kinds;
  } catch (err) {
    log.warn(
      'BATCH_SETTLEMENT=on but the EVM facilitator could not be asked for /supported; batch settlement is not offered',
      {
        error: String((err as Error)?.message ?? err),
      },
    );
    return undefined;
  }
  const [{ BatchSeller }, { processOwner }] = await Promise.all([import('./seller.js'), import('./owner.js')]);
  const seller = new BatchSeller(config, store.channels, log, processOwner());
  await seller.prepare(kinds, tools);
  if (seller.networks.length === 0) {
    log.warn('BATCH_SETTLEMENT=on but no EVM network can offer batch-settlement (the facilitator does not list it)');
    return undefined;
  }
  log.info('batch-settlement offered', { networks: seller.networks, withdrawDelay: config.batch.withdrawDelay });
  return seller;
}
