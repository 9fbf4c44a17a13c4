/**
 * A tool as both sides know it without its handler: its name, the route it is served at, what it takes and gives,
 * and whether it is paid. Every tool definition (src/tool.ts) is one; the agent works from these alone.
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
  /** Set when every call is paid (the policy itself is read by the server only). */
  payment?: unknown;
}
