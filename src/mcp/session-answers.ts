/** What `/mcp` answers when a session cannot be opened or no longer exists: the status, Retry-After, a JSON-RPC error. */
import type { Response } from 'express';
import { ToolError } from '../shared/errors.js';
import { retryAfterSeconds, setRetryAfter } from '../limits/limiter.js';
import type { SessionAdmission } from './sessions.js';

/** The JSON-RPC error code the MCP SDK's own transport answers an unknown session with. */
const SESSION_NOT_FOUND = -32001;

function send(res: Response, error: ToolError, code: number, id: string | number | null): void {
  setRetryAfter(res, error);
  res.setHeader('Cache-Control', 'no-store');
  res
    .status(error.httpStatus)
    .json({ jsonrpc: '2.0', id, error: { code, message: error.message, data: error.toBody().error } });
}

const inSeconds = (ms: number) => {
  const seconds = retryAfterSeconds(ms);
  return `${seconds} second${seconds === 1 ? '' : 's'}`;
};

/** The error refusing an initialize because this client, or the whole server, holds as many sessions as it may. */
export function refusalError(refused: Exclude<SessionAdmission<unknown>, { type: 'admitted' }>): ToolError {
  const retryAfter = retryAfterSeconds(refused.retryAfterMs);
  switch (refused.type) {
    case 'client_full':
      return new ToolError(
        'mcp_session_limit',
        `Your address already holds ${refused.held} open MCP sessions, the most one client may hold, and every one of them has a call in flight. Retry in ${inSeconds(refused.retryAfterMs)}, once one finishes; reuse an open session for further calls rather than opening new ones, and end the ones you no longer use (HTTP DELETE /mcp with their Mcp-Session-Id).`,
        { details: { limit: 'sessions_per_client', held: refused.held, retryAfterSeconds: retryAfter } },
      );
    case 'full':
      return new ToolError(
        'mcp_sessions_full',
        `This server holds the most MCP sessions it keeps (${refused.max}) and every one of them has a call in flight, so none can be ended to make room. Retry in ${inSeconds(refused.retryAfterMs)}, or call the tools over plain HTTP (no session needed).`,
        { details: { limit: 'sessions', max: refused.max, retryAfterSeconds: retryAfter } },
      );
  }
}

/** Answers an initialize the session table refused: 429 (this client is full) or 503 (all busy), with Retry-After. */
export function refuseSession(
  res: Response,
  refused: Exclude<SessionAdmission<unknown>, { type: 'admitted' }>,
  id: string | number | null,
): void {
  send(res, refusalError(refused), -32000, id);
}

/**
 * Answers a request whose Mcp-Session-Id names no open session: 404, as the MCP specification says, which tells a
 * client to start a new session with a new initialize request.
 */
export function sessionNotFound(res: Response, idleMs: number): void {
  const idle = idleMs >= 60_000 ? `${Math.round(idleMs / 60_000)} min` : `${Math.ceil(idleMs / 1000)} s`;
  const error = new ToolError(
    'mcp_session_not_found',
    `Session not found: this MCP session has ended (closed, idle for over ${idle}, or ended to make room for new sessions). Send a new initialize request without Mcp-Session-Id to start another.`,
  );
  send(res, error, SESSION_NOT_FOUND, null);
}
