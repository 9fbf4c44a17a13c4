/**
 * A store whose opening starts later than the server: a process answers its first unpaid requests (a 402, an MCP
 * `tools/list`) while the database driver loads and the file or connection is opened and migrated right after. Every
 * call made before the store is open waits for it; none is lost or answered without it. A store that fails to open
 * fails every such call, and {@link DeferredStore.open} rejects so that the process stops as a failed start would.
 */
import type { Store } from './store.js';

/** A store opened on demand, and how to start and await its opening. */
export interface DeferredStore {
  /** Stands for the store: each method waits for the opening (started by the first call if nothing started it). */
  store: Store;
  /** Starts opening the store (once); settles when it is open or has failed to open. */
  open(): Promise<Store>;
  /** Settles once the store is open, whoever started the opening; rejects when it failed. */
  opened: Promise<Store>;
}

/** The parts of a store a consumer receives, each made only of methods that return promises. */
type PartName = 'ledger' | 'toolState' | 'spends' | 'agentChannels' | 'buckets' | 'channels' | 'batchUpkeep';
type Method = (...args: unknown[]) => Promise<unknown>;
/**
 * A part as this wrapper serves it: a member that is not an asynchronous method becomes a type no part's member is
 * assignable from, so adding a synchronous method to a part fails to compile here (it could not wait for the store).
 */
type OnlyAsync<T> = { [K in keyof T]: T[K] extends (...args: never[]) => Promise<unknown> ? T[K] : { notAsync: K } };

/** Wraps `open` so that nothing is opened until {@link DeferredStore.open} or a first call. */
export function deferredStore(open: () => Promise<Store>): DeferredStore {
  let real: Store | undefined;
  let opening: Promise<Store> | undefined;
  let ready!: (store: Store) => void;
  let failed!: (err: unknown) => void;
  const opened = new Promise<Store>((resolve, reject) => ((ready = resolve), (failed = reject)));
  opened.catch(() => undefined); // rejections reach whoever awaits `opened` or `open()`
  const start = () =>
    (opening ??= open().then(
      (store) => ((real = store), ready(store), store),
      (err: unknown) => (failed(err), Promise.reject(err)),
    ));
  const call = (name: PartName | undefined, key: string, args: unknown[]) => {
    const target = (store: Store): Method => {
      const owner = (name ? store[name] : store) as Record<string, Method> | undefined;
      if (!owner) throw new Error(`this store keeps no ${name}`);
      return owner[key]!.bind(owner) as Method;
    };
    return real ? target(real)(...args) : start().then((store) => target(store)(...args));
  };
  const part = <K extends PartName>(name: K): OnlyAsync<NonNullable<Store[K]>> => {
    const methods = new Map<string, Method>();
    return new Proxy(
      {},
      {
        // Symbols and `then` are not methods of a part (an awaited part must not look like a promise).
        get: (_target, key) => {
          if (typeof key !== 'string' || key === 'then') return undefined;
          let method = methods.get(key);
          if (!method) methods.set(key, (method = (...args: unknown[]) => call(name, key, args)));
          return method;
        },
      },
    ) as OnlyAsync<NonNullable<Store[K]>>;
  };
  const store: Store = {
    ledger: part('ledger'),
    toolState: part('toolState'),
    spends: part('spends'),
    agentChannels: part('agentChannels'),
    buckets: part('buckets'),
    channels: part('channels'),
    batchUpkeep: part('batchUpkeep'),
    durable: () => call(undefined, 'durable', []) as Promise<void>,
    ping: () => call(undefined, 'ping', []) as Promise<void>,
    probeWrite: () => call(undefined, 'probeWrite', []) as Promise<void>,
    // Closing a store that was never opened opens nothing; one being opened is closed once open.
    close: async () => {
      if (!opening) return;
      const done = await opening.catch(() => undefined);
      await done?.close();
    },
  };
  return { store, open: start, opened };
}
