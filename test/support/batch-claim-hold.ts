import { startHookedProxy, type HeldRequest, type HookedProxy } from './hooked-proxy.js';

/** Where a claim is held: before the facilitator sees it, or after it landed on chain but before its answer. */
export type ClaimHoldPoint = 'before-send' | 'after-send';

/** A proxy in front of a facilitator that holds the first claim it is armed for (its answer never comes). */
export interface ClaimHoldingProxy {
  url: string;
  /** Arms the proxy: the next claim request is held at `point`; resolves once it is held (with the claim transaction when it landed). */
  holdNextClaim(point: ClaimHoldPoint): Promise<{ transaction?: string }>;
  close(): Promise<void>;
}

/** Whether a facilitator request is a `/settle` of a `claim` payload. */
function isClaim(held: HeldRequest): boolean {
  if (held.req.url !== '/settle') return false;
  const body = JSON.parse(held.body.toString('utf8') || '{}') as { paymentPayload?: { payload?: { type?: string } } };
  return body.paymentPayload?.payload?.type === 'claim';
}

/** Starts the proxy on 127.0.0.1 in front of the facilitator at `target`; it passes everything on until armed. */
export async function startClaimHoldingProxy(target: string): Promise<ClaimHoldingProxy> {
  let armed: { point: ClaimHoldPoint; held: (found: { transaction?: string }) => void } | undefined;
  const proxy: HookedProxy = await startHookedProxy(target, {
    before: (held) => {
      if (!isClaim(held)) return false;
      if (armed?.point === 'before-send') {
        armed.held({});
        armed = undefined;
        return true; // never answered, never passed on
      }
      return false;
    },
    after: (held, answer) => {
      if (!isClaim(held) || armed?.point !== 'after-send') return false;
      const { transaction } = JSON.parse(answer.body.toString('utf8')) as { transaction?: string };
      armed.held(transaction ? { transaction } : {});
      armed = undefined;
      return true; // landed on chain; its answer never reaches the seller
    },
  });
  return {
    url: proxy.url,
    holdNextClaim: (point) => new Promise((resolve) => (armed = { point, held: resolve })),
    close: async () => {
      proxy.server.closeAllConnections();
      await proxy.close();
    },
  };
}

/** NODE_OPTIONS and the variable that make a spawned process's clock run `ms` ahead (test/support/clock-offset.mjs). */
export function clockAhead(ms: number): Record<string, string> {
  const preload = new URL('./clock-offset.mjs', import.meta.url).href;
  return { NODE_OPTIONS: `--import ${preload}`, TOLLBOOTH_TEST_CLOCK_OFFSET_MS: String(ms) };
}
