import type { Config } from './config.js';
import type { InvokeDeps } from './invoke.js';
import type { AnyFreeToolDefinition, AnyToolDefinition } from './tool.js';

/** What serves the registry over any transport (the MCP server, discovery): the pipeline plus what it lists. */
export interface ServerDeps extends InvokeDeps {
  config: Config;
  tools: readonly AnyToolDefinition[];
  /** Free helper endpoints, listed after the paid tools and called without payment. */
  freeTools?: readonly AnyFreeToolDefinition[];
  version: string;
}
