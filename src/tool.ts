import type { z } from 'zod';
import type { Logger } from './log.js';
import type { Providers } from './providers/index.js';
import type { Store } from './store/store.js';

/** The four base URLs of the specification; each tool is served under one of them. */
export type ToolGroup = 'tools' | 'token' | 'smm' | 'transfers';

/** Price per call in the asset's smallest units, by price-table column. */
export interface PriceTable {
  /** The default column: every network not named below. */
  default: string;
  /** The `eip155:10` (Optimism) column; tools group only. */
  optimism?: string;
  /** The `stellar:pubnet` column (7-decimal units); tools group only. */
  stellar?: string;
}

/** MCP tool annotations, set truthfully per tool. */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
  destructiveHint?: boolean;
}

/** What a handler may use: never the transport, never the payment. */
export interface ToolContext {
  providers: Providers;
  store: Store;
  log: Logger;
  signal: AbortSignal;
  /** Reports progress of a long call (MCP progress notifications; ignored on HTTP). */
  progress: (done: number, total: number, message?: string) => void;
}

/** One endpoint, defined once and served on HTTP and MCP. */
export interface ToolDefinition<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  /** Written for an agent: what it returns and what it costs. */
  description: string;
  group: ToolGroup;
  method: 'GET' | 'POST';
  path: string;
  input: I;
  output: O;
  price: PriceTable;
  annotations: ToolAnnotations;
  /** An example input, advertised in discovery (bazaar `body`, OpenAPI); must parse. */
  example?: z.input<I>;
  /** Maximum request body in bytes (HTTP); defaults to 64 KiB. */
  maxBodyBytes?: number;
  handler: (input: z.output<I>, ctx: ToolContext) => Promise<z.input<O>> | z.input<O>;
}

/** A tool definition with its generic types erased, as transports see it. */
export type AnyToolDefinition = ToolDefinition<z.ZodType, z.ZodType>;

/** Identity helper that keeps a tool's input and output types linked to its handler. */
export function defineTool<I extends z.ZodType, O extends z.ZodType>(
  def: ToolDefinition<I, O>,
): ToolDefinition<I, O> {
  return def;
}
