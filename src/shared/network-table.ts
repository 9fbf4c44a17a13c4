/**
 * The network table a process works from, the same for the server and the agent: the built-in set's table
 * (TOLLBOOTH_NETWORK_SET) with the operator's entries merged in (NETWORKS_FILE or NETWORKS_JSON).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { defaultNetworkTable, type NetworkSet } from './network-sets.js';
import { mergeNetworks, NetworkFieldsSchema, type NetworkEntry } from './networks.js';
import { ConfigError } from './env.js';

/** The operator's network table (`NETWORKS_FILE` / `NETWORKS_JSON`). */
export const NetworksOverrideSchema = z.object({
  replace: z.boolean().default(false),
  networks: z.array(NetworkFieldsSchema.partial().extend({ id: NetworkFieldsSchema.shape.id })),
});

function readTable(file: string | undefined, json: string | undefined, set: NetworkSet): NetworkEntry[] {
  const table = defaultNetworkTable(set);
  const raw = file ? readFileSync(file, 'utf8') : json;
  if (!raw) return table.map((n) => ({ ...n }));
  const parsed = NetworksOverrideSchema.safeParse(JSON.parse(raw));
  if (!parsed.success) {
    throw new ConfigError(`Invalid network table (${file ?? 'NETWORKS_JSON'}): ${z.prettifyError(parsed.error)}`);
  }
  return mergeNetworks(table, parsed.data.networks, parsed.data.replace);
}

/** The set's table with the operator's entries merged in; throws ConfigError naming what is wrong. */
export function networkTable(env: {
  NETWORKS_FILE?: string | undefined;
  NETWORKS_JSON?: string | undefined;
  TOLLBOOTH_NETWORK_SET?: NetworkSet | undefined;
}): { networkSet: NetworkSet; networks: NetworkEntry[] } {
  const networkSet = env.TOLLBOOTH_NETWORK_SET ?? 'mainnet';
  try {
    return { networkSet, networks: readTable(env.NETWORKS_FILE, env.NETWORKS_JSON, networkSet) };
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`Could not read the network table: ${(err as Error).message}`);
  }
}
