import { FacilitatorTimeoutError, type FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SupportedResponse } from '@x402/core/types';
import type { Config } from '../../config/config.js';
import { facilitatorHeaders, shownUrl } from './facilitator-auth.js';
import { createHttpFacilitatorClient } from './facilitator-http.js';
import { FacilitatorThread } from './facilitator-thread.js';
import type { WorkerEntry } from '../../workers/entry.js';
import { canonicalNetworkId } from '../reading/match.js';
import type { NetworkFamily } from '../../shared/networks.js';
import { RAILS } from '../rails/index.js';
import type { Rail } from '../rails/rail.js';

/** How one network family is verified and settled. */
export type FacilitatorMode = 'remote' | 'in-process' | 'none';

/** The facilitators the broker talks to: one client routing by network, and what each family can do. */
export interface Facilitator {
  client: FacilitatorClient;
  /** Mode per family (a family with a settlement key is in-process, else remote with a URL, else none). */
  modes: Record<NetworkFamily, FacilitatorMode>;
  /** Summary for health output: in-process, remote, mixed or none. */
  mode: string;
  /** The client serving each family that has one (families may share a client); for readiness checks. */
  clients: Partial<Record<NetworkFamily, FacilitatorClient>>;
  /** The remote facilitator of each remote family, as logs and `/readyz` may show it (origin and path, no credentials). */
  shown: Partial<Record<NetworkFamily, string>>;
  /** `network|scheme` pairs this server can verify and settle. */
  supports(network: string, scheme: string): boolean;
  /** The thread the in-process families are verified and settled on; absent when no family has a settlement key. */
  thread?: FacilitatorThread;
  /** Closes the connections to remote facilitators and ends the facilitator thread once its calls in hand are done. */
  close(): Promise<void>;
}

/** Bounds an in-process facilitator call with the same error the remote client raises on timeout. */
function withTimeout<T>(promise: Promise<T>, ms: number, operation: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FacilitatorTimeoutError(operation, ms)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function remoteClient(url: string, config: Config): FacilitatorClient & { close(): Promise<void> } {
  const { timeoutMs, settleTimeoutMs, auth } = config.facilitator;
  // Static headers (FACILITATOR_HEADERS) and, for the CDP facilitator, a JWT signed for each request.
  const headers = facilitatorHeaders(url, auth, config.chainTools.cdp.credentials);
  const secrets = config.secrets ?? [];
  return createHttpFacilitatorClient(url, { timeoutMs, settleTimeoutMs, secrets, ...(headers ? { headers } : {}) });
}

const FAMILIES: readonly NetworkFamily[] = ['evm', 'svm', 'stellar', 'algorand'];

/** The in-process facilitator as a client: its work runs on the facilitator thread, its time limits here. */
function inProcessClient(thread: FacilitatorThread, config: Config): FacilitatorClient {
  const { timeoutMs, settleTimeoutMs } = config.facilitator;
  return {
    verify: (p: PaymentPayload, r: PaymentRequirements) => withTimeout(thread.verify(p, r), timeoutMs, 'verify'),
    settle: (p: PaymentPayload, r: PaymentRequirements) => withTimeout(thread.settle(p, r), settleTimeoutMs, 'settle'),
    getSupported: () => thread.supported(),
  } as FacilitatorClient;
}

/** The facilitator thread of the families with a settlement key, started (their rails registered); none without keys. */
async function startThread(
  config: Config,
  rails: readonly Rail[],
  entry?: WorkerEntry,
): Promise<{ thread: FacilitatorThread; supported: string[] } | undefined> {
  const keyed = FAMILIES.filter((family) => config.facilitator.keys[family]);
  if (keyed.length === 0) return undefined;
  const { keys, timeoutMs, settleTimeoutMs } = config.facilitator;
  const setup = {
    settings: { facilitator: { keys, timeoutMs, settleTimeoutMs } },
    families: keyed.map((family) => ({ family, nets: config.networks.filter((n) => n.family === family) })),
    rails: rails.filter((r) => keyed.includes(r.family)).map((r) => r.id),
    ...(config.batch.enabled && keys.evm ? { batchSettlement: true } : {}),
  };
  const thread = entry ? new FacilitatorThread(setup, entry) : new FacilitatorThread(setup);
  return { thread, supported: (await thread.start()).supported };
}

/** One client that sends each call to the client of its network's family and merges their `/supported` answers. */
function routingClient(clients: ReadonlyMap<NetworkFamily, FacilitatorClient>, config: Config): FacilitatorClient {
  // Version-1 short names (`base`) are routed to the family of their CAIP-2 network.
  const familyOf = (network: string): NetworkFamily | undefined =>
    config.networks.find((n) => n.id === canonicalNetworkId(network))?.family;
  const route = (r: PaymentRequirements): FacilitatorClient => {
    const family = familyOf(r.network);
    const client = family ? clients.get(family) : undefined;
    if (!client) throw new Error(`no facilitator is configured for ${r.network}`);
    return client;
  };
  return {
    verify: async (p: PaymentPayload, r: PaymentRequirements) => route(r).verify(p, r),
    settle: async (p: PaymentPayload, r: PaymentRequirements) => route(r).settle(p, r),
    getSupported: async (): Promise<SupportedResponse> => {
      const answers = await Promise.all([...new Set(clients.values())].map((c) => c.getSupported()));
      return {
        kinds: answers.flatMap((a) => a.kinds),
        extensions: [...new Set(answers.flatMap((a) => a.extensions))],
        signers: Object.assign({}, ...answers.map((a) => a.signers)),
      };
    },
  } as FacilitatorClient;
}

/** Summarizes the families' modes for health output: the one mode they share, `mixed`, or `none`. */
function summarizeModes(modes: Record<NetworkFamily, FacilitatorMode>): string {
  const distinct = [...new Set(Object.values(modes).filter((m) => m !== 'none'))];
  return distinct.length === 0 ? 'none' : distinct.length === 1 ? distinct[0]! : 'mixed';
}

/**
 * Builds the facilitators per network family: in-process where a settlement key is configured
 * (FACILITATOR_<FAMILY>_…), remote where a URL is (FACILITATOR_URL_<FAMILY> or FACILITATOR_URL), else none.
 * The in-process families run on the facilitator thread, started from `threadEntry` (tests) or the default entry.
 */
export async function createFacilitator(
  config: Config,
  rails: readonly Rail[] = RAILS,
  threadEntry?: WorkerEntry,
): Promise<Facilitator> {
  // The families with a key are verified and settled on one thread of their own (facilitator-thread.ts).
  const local = await startThread(config, rails, threadEntry);
  const localClient = local ? inProcessClient(local.thread, config) : undefined;
  const clients = new Map<NetworkFamily, FacilitatorClient>();
  const modes = {} as Record<NetworkFamily, FacilitatorMode>;
  const supported = new Set<string>(local?.supported);
  const remotes = new Map<string, FacilitatorClient & { close(): Promise<void> }>();
  const shown: Partial<Record<NetworkFamily, string>> = {};
  for (const family of FAMILIES) {
    const nets = config.networks.filter((n) => n.family === family);
    const familyRails = rails.filter((r) => r.family === family);
    const url = config.facilitator.urls[family];
    if (config.facilitator.keys[family] && localClient) {
      clients.set(family, localClient);
      modes[family] = 'in-process';
    } else if (url) {
      const client = remotes.get(url) ?? remoteClient(url, config);
      remotes.set(url, client);
      for (const net of nets)
        for (const rail of familyRails)
          for (const id of rail.networkIds?.(net) ?? [net.id]) supported.add(`${id}|${rail.scheme}`);
      clients.set(family, client);
      shown[family] = shownUrl(url);
      modes[family] = 'remote';
    } else {
      modes[family] = 'none';
    }
  }
  const client = routingClient(clients, config);
  const mode = summarizeModes(modes);
  return {
    client,
    modes,
    mode,
    clients: Object.fromEntries(clients),
    shown,
    supports: (network, scheme) => supported.has(`${network}|${scheme}`),
    ...(local ? { thread: local.thread } : {}),
    close: async () => {
      await Promise.all([...remotes.values()].map((remote) => remote.close()));
      await local?.thread.close();
    },
  };
}
