/** How many streamable-HTTP MCP sessions one process keeps, and for how long (MCP_MAX_SESSIONS*, MCP_SESSION_IDLE_MS). */

/** The bounds of the `/mcp` session table. */
export interface McpSessionSettings {
  /** Sessions open at once in this process; past it the least recently used idle one is ended to make room. */
  max: number;
  /** Sessions one client address (as the per-IP limit counts it) may hold open at once; past it initialize is refused. */
  perClient: number;
  /** A session with no request for this long is ended (clients that never send DELETE). */
  idleMs: number;
}

/** Defaults: a few MB of sessions at most; an agent normally holds one session and reuses it for every call. */
export const MCP_SESSION_DEFAULTS: McpSessionSettings = { max: 1000, perClient: 32, idleMs: 10 * 60_000 };

/** The raw settings, as the environment gives them. */
export interface McpSessionEnv {
  MCP_MAX_SESSIONS?: number;
  MCP_MAX_SESSIONS_PER_CLIENT?: number;
  MCP_SESSION_IDLE_MS?: number;
}

/**
 * Parses the session bounds. An unset per-client cap above MCP_MAX_SESSIONS follows it down; one set above it is
 * refused, since it could never apply.
 */
export function mcpSessionSettings(env: McpSessionEnv): McpSessionSettings {
  const max = env.MCP_MAX_SESSIONS ?? MCP_SESSION_DEFAULTS.max;
  const perClient = env.MCP_MAX_SESSIONS_PER_CLIENT ?? Math.min(MCP_SESSION_DEFAULTS.perClient, max);
  if (perClient > max)
    throw new Error(
      `MCP_MAX_SESSIONS_PER_CLIENT (${perClient}) must not exceed MCP_MAX_SESSIONS (${max}); lower it or raise MCP_MAX_SESSIONS.`,
    );
  return { max, perClient, idleMs: env.MCP_SESSION_IDLE_MS ?? MCP_SESSION_DEFAULTS.idleMs };
}
