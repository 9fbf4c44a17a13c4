import type { Config } from '../config/config.js';
import type { InvokeDeps } from '../pipeline/invoke.js';
import type { AnyToolDefinition } from '../tool/tool.js';

/** What serves the registry over any transport (the MCP server, discovery): the pipeline plus what it lists. */
export interface ServerDeps extends InvokeDeps {
  config: Config;
  /** Every tool served, paid (with a price) and free (without), in listing order. */
  tools: readonly AnyToolDefinition[];
  version: string;
}
