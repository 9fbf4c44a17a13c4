/**
 * A tool as both sides know it without its handler: its name, the route it is served at, what it takes and gives,
 * and whether it is paid. Every tool definition (src/tool/tool.ts) is one; the agent works from these alone.
 */
import type { z } from 'zod';

/** The URL group of a tool: which base URL (BASE_URL_TOOLS, _TOKEN, _SMM, _TRANSFERS) serves its route. */
export type ToolGroup = 'tools' | 'token' | 'smm' | 'transfers';

/** The handler-free part of a tool definition: what the agent calls a remote tool with. */
export interface ToolEndpoint {
  name: string;
  group: ToolGroup;
  method: 'GET' | 'POST';
  /** The exact route; `:name` parameters are input fields of the same name. */
  path: string;
  input: z.ZodType;
  output: z.ZodType;
  /** Set when every call is paid (the policy itself is read by the server only): ask with {@link isPaidEndpoint}. */
  pricing?: unknown;
}

/**
 * Whether every call of a tool is paid (it has a price policy): the one question both sides ask, the server through
 * `isPaid` (src/tool/tool.ts), which narrows a definition to its policy and price table on the same answer.
 */
export function isPaidEndpoint(tool: Pick<ToolEndpoint, 'pricing'>): boolean {
  return tool.pricing !== undefined;
}
