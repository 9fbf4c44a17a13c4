/** What a tools/call gets from the session it arrived on: its abort signal, progress notifications, questions to the user. */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';

/** What a tools/call gets from the session it arrived on, whoever carries it out. */
export interface McpCallSession {
  signal: AbortSignal;
  /** The request's `params._meta` as sent (the payment, an MPP credential, the progress token). */
  meta: Record<string, unknown> | undefined;
  /** Sends a progress notification when the caller asked for them (ignored otherwise). */
  progress: (done: number, total: number, message?: string) => void;
  /** Asks the user a yes/no question through MCP form elicitation; `unavailable` when the client cannot be asked. */
  confirm: (message: string) => Promise<'accepted' | 'declined' | 'unavailable'>;
}

/** The part of the SDK's request context a call's session is made of. */
export interface RequestExtra {
  signal: AbortSignal;
  sendNotification: (notification: ServerNotification) => Promise<void>;
}

/** The session of one tools/call: progress goes to the request's `progressToken`, questions through `server`. */
export function callSession(
  server: Server,
  extra: RequestExtra,
  meta: Record<string, unknown> | undefined,
): McpCallSession {
  const progressToken = meta?.progressToken as string | number | undefined;
  return {
    signal: extra.signal,
    meta,
    progress: (progress, total, message) => {
      if (progressToken === undefined) return;
      void extra
        .sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress, total, ...(message ? { message } : {}) },
        })
        .catch(() => {});
    },
    confirm: (message) => confirm(server, extra.signal, message),
  };
}

/** The form of a yes/no question: one object, so the shared validator compiles it once (src/mcp/validator.ts). */
const APPROVAL_FORM = {
  type: 'object' as const,
  properties: { approve: { type: 'boolean' as const, title: 'Approve', description: 'true to go ahead' } },
  required: ['approve'],
};

/** Asks through form elicitation; accepted only with `approve: true`. */
async function confirm(
  server: Server,
  signal: AbortSignal,
  message: string,
): Promise<'accepted' | 'declined' | 'unavailable'> {
  if (!server.getClientCapabilities()?.elicitation?.form) return 'unavailable';
  try {
    const answer = await server.elicitInput({ mode: 'form', message, requestedSchema: APPROVAL_FORM }, { signal });
    return answer.action === 'accept' && answer.content?.approve === true ? 'accepted' : 'declined';
  } catch {
    return 'unavailable';
  }
}
