/**
 * The store's batch-settlement channels as the official `ChannelStorage` of `@x402/evm/batch-settlement/server`. The
 * two shapes are the same field for field, so this is the identity at run time; its type is the compile-time proof
 * that the official server scheme (reserve on verify, commit before settle, clear on cancel) can run on our store.
 */
import type { ChannelStorage } from '@x402/evm/batch-settlement/server';
import type { BatchChannels } from '../../store/channels.js';

/** The store's channels, typed as the official scheme's channel storage. */
export function officialChannelStorage(channels: BatchChannels): ChannelStorage {
  return channels;
}
