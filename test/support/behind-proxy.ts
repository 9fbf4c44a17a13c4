import { createServer, request, type Server } from 'node:http';
import { once } from 'node:events';
import { paidTools } from '../../tools/index.js';
import { startPaidEnvironment, type PaidEnvironment } from './paid.js';
import { spawnServe, type SpawnedServer } from './spawn.js';

/** As docs/deploy.md says for one proxy in front: believe the one X-Forwarded-For entry it sets or appends. */
const BEHIND_ONE_PROXY = { TRUST_PROXY: '1' };

/** Every test request comes from one address: the paying instances allow more of them than the default 300 at once. */
const MANY_REQUESTS = {
  RATE_LIMIT_IP_BURST: '5000',
  RATE_LIMIT_IP_PER_MINUTE: '60000',
  RATE_LIMIT_TOOL_BURST: '5000',
  RATE_LIMIT_TOOL_PER_MINUTE: '60000',
};

/** The unpaid answer of a paid tool: the route's method and path, no body, no payment. */
export const probe = (base: string, tool: (typeof paidTools)[number]) =>
  fetch(base + tool.path, { method: tool.method });

/** Bytes of all response headers as they go over the wire (name, ": ", value, CRLF). */
export function headerBytes(res: Response): number {
  let total = 0;
  for (const [name, value] of res.headers) total += name.length + value.length + 4;
  return total;
}

/** A GET sent from a chosen local address (all of 127.0.0.0/8 is loopback), so the proxy sees that client address. */
export function getFrom(localAddress: string, url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { localAddress, headers, agent: false }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode!));
    });
    req.once('error', reject);
    req.end();
  });
}

/** An upstream that holds every request until released, then fails it: keeps a tool's handler running on demand. */
export interface HeldUpstream {
  url: string;
  release(): void;
  close(): Promise<void>;
}

/** Starts a HeldUpstream on a free port of 127.0.0.1. */
async function startHeldUpstream(): Promise<HeldUpstream> {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const server: Server = createServer((req, res) => {
    req.resume();
    void released.then(() => res.writeHead(503).end());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    release,
    close: async () => {
      release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What the deploy tests need of a proxy they started: its URL, its log, and a way to stop it. */
export interface StartedProxy {
  url: string;
  errors(): string;
  stop(): Promise<void>;
}

/**
 * The built server behind a proxy, as the deploy tests run it; its fields are filled as their parts start, so `stop`
 * also cleans up after a start that failed half-way.
 */
export interface ProxiedFleet<P extends StartedProxy> {
  /** The local chain and facilitator the paying instances settle on. */
  paid: PaidEnvironment;
  /** Two paying instances (TRUST_PROXY=1) behind `proxy`. */
  instances: SpawnedServer[];
  proxy: P;
  /**
   * A third instance behind its own proxy, allowing two requests per client address and then 429 for a long while:
   * which requests share a bucket tells which client address the server counted.
   */
  limited: SpawnedServer;
  limitedProxy: P;
  /** Every chain RPC and the onramp API of the wallet tools: wallet-readiness runs until the test lets it finish. */
  held: HeldUpstream;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** A ProxiedFleet whose proxies `startProxy` starts in front of the given upstreams (host:port). */
export function proxiedFleet<P extends StartedProxy>(
  startProxy: (upstreams: readonly string[]) => Promise<P>,
): ProxiedFleet<P> {
  const fleet = { instances: [] } as unknown as ProxiedFleet<P>;
  const hosts = (servers: SpawnedServer[]) => servers.map((s) => new URL(s.url).host);
  fleet.start = async () => {
    fleet.held = await startHeldUpstream();
    const heldChains = Object.fromEntries(
      ['base', 'base-sepolia', 'solana', 'solana-devnet'].map((c) => [c, fleet.held.url]),
    );
    const wallets = {
      RPC_URLS: JSON.stringify(heldChains),
      CDP_API_URL: fleet.held.url,
      WALLET_STEP_TIMEOUT_MS: '600000',
      UPSTREAM_TIMEOUT_MS: '600000',
      UPSTREAM_RETRIES: '0',
      WALLET_READINESS_NETWORKS: 'eip155:8453',
    };
    // The chain, then the two paying instances and their proxy; beside them the limited instance and its proxy.
    const paying = async () => {
      fleet.paid = await startPaidEnvironment(1);
      fleet.instances = await Promise.all(
        [1, 2].map(() => spawnServe({ ...fleet.paid.env, ...wallets, ...BEHIND_ONE_PROXY, ...MANY_REQUESTS })),
      );
      fleet.proxy = await startProxy(hosts(fleet.instances));
    };
    const limiting = async () => {
      fleet.limited = await spawnServe({
        ...BEHIND_ONE_PROXY,
        RATE_LIMIT_IP_BURST: '2',
        RATE_LIMIT_IP_PER_MINUTE: '0.1',
      });
      fleet.limitedProxy = await startProxy(hosts([fleet.limited]));
    };
    await Promise.all([paying(), limiting()]);
  };
  fleet.stop = async () => {
    await Promise.all([fleet.proxy?.stop(), fleet.limitedProxy?.stop()]);
    await Promise.all([...fleet.instances, fleet.limited].map((i) => i?.stop()));
    await Promise.all([fleet.paid?.stop(), fleet.held?.close()]);
  };
  return fleet;
}
