/**
 * The open streamable-HTTP MCP sessions of one process, bounded: at most `max` in all and `perClient` per client
 * address. A session with no request for `idleMs` is ended. When a new session would pass its client's cap, that
 * client's least recently used idle session is ended to make room (one address never pushes out another's); when it
 * would pass `max`, the least recently used idle session of any client is. A session with a call in flight (a POST
 * being answered) is never ended; when none is idle, the new session is refused until a call finishes.
 */
import type { McpSessionSettings } from './session-settings.js';

/** What the table tells the metrics: sessions open, and sessions it ended itself. */
export interface McpSessionEvents {
  /** The number of open sessions changed. */
  open(count: number): void;
  /** The table ended a session: `evicted` to make room for a new one, `expired` after it idled for `idleMs`. */
  ended(reason: 'evicted' | 'expired'): void;
}

/** What a session's transport must offer the table: a way to end it. */
export interface Closable {
  close(): Promise<void>;
}

/** A new session's place in the table, held from admission until its initialize request has been answered. */
export interface SessionTicket<T> {
  /** The initialize succeeded: the session is open under `id`, its initialize request still in flight. */
  opened(id: string, transport: T): void;
  /** The initialize request's answer is finished: its call ends, or the place is given back if it never opened. */
  done(): void;
}

/** Whether a new session may open: admitted, or refused because this client or the whole table is full. */
export type SessionAdmission<T> =
  | { type: 'admitted'; ticket: SessionTicket<T> }
  | { type: 'client_full'; held: number; retryAfterMs: number }
  | { type: 'full'; max: number; retryAfterMs: number };

/** An open session found by its id: its transport, and `done` to call when the request it was found for is finished. */
export interface SessionUse<T> {
  transport: T;
  done: () => void;
}

interface Entry<T> {
  id: string;
  transport: T;
  client: string;
  lastSeen: number;
  /** POST requests of this session being answered right now. */
  calls: number;
}

/** How long a caller refused because every session is busy is asked to wait. */
const BUSY_RETRY_MS = 5_000;

const NO_EVENTS: McpSessionEvents = { open: () => {}, ended: () => {} };

/** The session table; see the module comment. */
export class SessionTable<T extends Closable> {
  /** Least recently used first: every use moves a session to the end. */
  private readonly entries = new Map<string, Entry<T>>();
  private readonly clients = new Map<string, number>();
  /** Admitted sessions whose initialize has not been answered yet (they count against both caps). */
  private pending = 0;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly settings: McpSessionSettings,
    private readonly events: McpSessionEvents = NO_EVENTS,
    private readonly now: () => number = Date.now,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(settings.idleMs, 60_000));
    this.sweeper.unref();
  }

  /** Sessions open right now. */
  get size(): number {
    return this.entries.size;
  }

  /** Admits a new session for `client`, ending the least recently used idle session (its own first) if need be. */
  admit(client: string): SessionAdmission<T> {
    const held = this.clients.get(client) ?? 0;
    if (held >= this.settings.perClient && !this.evictOldestIdle(client))
      return { type: 'client_full', held, retryAfterMs: BUSY_RETRY_MS };
    if (this.entries.size + this.pending >= this.settings.max && !this.evictOldestIdle())
      return { type: 'full', max: this.settings.max, retryAfterMs: BUSY_RETRY_MS };
    this.pending++;
    this.count(client, 1);
    let state: 'pending' | 'opened' | 'done' = 'pending';
    let opened: Entry<T> | undefined;
    return {
      type: 'admitted',
      ticket: {
        opened: (id, transport) => {
          if (state !== 'pending') return;
          state = 'opened';
          this.pending--;
          opened = { id, transport, client, lastSeen: this.now(), calls: 1 };
          this.entries.set(id, opened);
          this.events.open(this.entries.size);
        },
        done: () => {
          if (state === 'pending') {
            this.pending--;
            this.count(client, -1);
          } else if (state === 'opened' && opened) this.finish(opened);
          state = 'done';
        },
      },
    };
  }

  /**
   * The open session `id`, marked as used now (and as answering a call when `call`), or undefined when there is none:
   * never opened, closed, evicted, or idle past `idleMs` (then it is ended here, before the sweeper gets to it).
   */
  use(id: string, call: boolean): SessionUse<T> | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    if (entry.calls === 0 && this.now() - entry.lastSeen >= this.settings.idleMs) {
      this.end(id, entry, 'expired');
      return undefined;
    }
    this.touch(id, entry);
    if (!call) return { transport: entry.transport, done: () => {} };
    entry.calls++;
    let finished = false;
    return {
      transport: entry.transport,
      done: () => {
        if (finished) return;
        finished = true;
        this.finish(entry);
      },
    };
  }

  /** Forgets session `id` after its transport closed (DELETE, or ended by this table). */
  closed(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    this.count(entry.client, -1);
    this.events.open(this.entries.size);
  }

  /** Stops the sweeper and closes every session. */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const open = [...this.entries];
    for (const [id] of open) this.closed(id);
    await Promise.all(open.map(([, entry]) => entry.transport.close().catch(() => {})));
  }

  private finish(entry: Entry<T>): void {
    entry.calls--;
    if (this.entries.get(entry.id) === entry) this.touch(entry.id, entry);
  }

  private touch(id: string, entry: Entry<T>): void {
    entry.lastSeen = this.now();
    this.entries.delete(id);
    this.entries.set(id, entry);
  }

  private count(client: string, by: 1 | -1): void {
    const held = (this.clients.get(client) ?? 0) + by;
    if (held > 0) this.clients.set(client, held);
    else this.clients.delete(client);
  }

  /** Ends session `id` (removed now; its transport closes in the background). */
  private end(id: string, entry: Entry<T>, reason: 'evicted' | 'expired'): void {
    if (this.entries.get(id) !== entry) return;
    this.closed(id);
    this.events.ended(reason);
    void entry.transport.close().catch(() => {});
  }

  /** Ends the least recently used session with no call in flight (of `client` when given); false when there is none. */
  private evictOldestIdle(client?: string): boolean {
    for (const [id, entry] of this.entries) {
      if (entry.calls > 0 || (client !== undefined && entry.client !== client)) continue;
      this.end(id, entry, 'evicted');
      return true;
    }
    return false;
  }

  /** Ends every session idle for `idleMs` or longer. */
  private sweep(): void {
    const cutoff = this.now() - this.settings.idleMs;
    for (const [id, entry] of this.entries) {
      if (entry.lastSeen > cutoff) break;
      if (entry.calls === 0) this.end(id, entry, 'expired');
    }
  }
}
