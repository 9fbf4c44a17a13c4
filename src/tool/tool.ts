import { z } from 'zod';
import type { Logger } from '../shared/log.js';
import { describeTool, priceTable, type PaymentPolicy, type PriceTable } from './price.js';
import { isPaidEndpoint, type ToolGroup } from '../shared/tool-endpoint.js';
import type { Providers } from '../providers/index.js';
import type { Unconfigured } from '../providers/upstream-types.js';
import type { ToolState } from '../store/tool-state.js';
import type { JobInput, JobName, JobOutput } from '../workers/jobs.js';

export type { ToolGroup } from '../shared/tool-endpoint.js';
export type { Accepts, PaymentPolicy, PriceTable } from './price.js';

/** MCP tool annotations, set truthfully per tool. */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
  destructiveHint?: boolean;
}

/** Who paid for a call, as a handler may record it (e.g. with an order): never the signed payment itself. */
export interface ToolPayer {
  /** The payer's address on the payment's network. */
  payer: string;
  /** The payment's replay key (what makes it single-use), to tie stored state to the payment. */
  replayKey: string;
}

/** What a handler may use: never the transport, never the raw payment. */
export interface ToolContext {
  providers: Providers;
  /** Drips and orders kept between calls: the only part of the store a handler sees (never a payment). */
  store: ToolState;
  log: Logger;
  signal: AbortSignal;
  /** Reports progress of a long call (MCP progress notifications; ignored on HTTP). */
  progress: (done: number, total: number, message?: string) => void;
  /** Who paid: the verified payment's payer and replay key; set for paid handlers, absent in prechecks and free endpoints. */
  payer?: ToolPayer;
  /**
   * Runs the tool's declared worker job (`worker.job`, one of src/workers/jobs.ts) on a worker thread, in the slot
   * the call was admitted to before its payment was read; a crash or the time limit rejects (the call is not charged).
   */
  offload<K extends JobName>(job: K, data: JobInput<K>): Promise<JobOutput<K>>;
}

/** A tool whose cost grows with its input: the CPU-bound job its handler runs on a worker thread (`ctx.offload`). */
export interface WorkerSpec {
  /** The job, by its name in src/workers/jobs.ts. */
  job: JobName;
}

/**
 * One endpoint as its tool file writes it (see {@link defineTool}). A tool with a `pricing` is paid per call; a tool
 * without one is free (no payment, no broker), and its path may carry `:name` parameters, which arrive as input fields
 * of the same name.
 */
export interface ToolSpec<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> extends ToolFields<I, O> {
  /**
   * The input: a `z.object(...)`, or a function returning one, called once when the input is first needed (a server
   * then builds at start-up only the schemas its first answers use).
   */
  input: I | (() => I);
  /** The output schema, or a function returning it (built on first use, like `input`). */
  output: O | (() => O);
}

/** Everything a tool file writes but its schemas (see {@link ToolSpec}). */
interface ToolFields<I extends z.ZodType, O extends z.ZodType> {
  name: string;
  title: string;
  /** Written for an agent: what it does and returns, never its price (defineTool appends the generated price sentence). */
  description: string;
  /** Which base URL serves the tool's HTTP route; nothing else. */
  group: ToolGroup;
  method: 'GET' | 'POST';
  path: string;
  annotations: ToolAnnotations;
  handler(input: z.output<I>, ctx: ToolContext): Promise<z.input<O>> | z.input<O>;
  /** What the tool costs in dollars and which payment options it accepts; absent for a free tool. */
  pricing?: PaymentPolicy;
  /** An example input, advertised in discovery (bazaar `body`, OpenAPI); must parse. Paid tools only. */
  example?: z.input<I>;
  /**
   * Set for a tool whose cost grows with its input: each call is admitted to the tool's bounded worker queue before
   * its payment is read (a full queue answers 503 `tool_busy`, nothing claimed) and its job runs off the event loop.
   */
  worker?: WorkerSpec;
  /** Maximum request body in bytes (HTTP); defaults to 64 KiB. */
  maxBodyBytes?: number;
  /**
   * Optional check of a parsed input against upstream state, run before the payment is read (so a request it
   * refuses is answered with its error, never a 402 or a charge); throw a ToolError to refuse. Paid tools only.
   */
  precheck?(input: z.output<I>, ctx: ToolContext): Promise<void> | void;
  /**
   * What a call of this input needs that the operator may leave unconfigured (an upstream's URL or key, a faucet key):
   * asked after the input is checked and before any payment, it returns what is missing, and the call is answered 501
   * `not_implemented` naming the settings (never a 402, never charged); a bare probe still gets the price.
   */
  needs?(input: z.output<I>, providers: Providers): Unconfigured | undefined;
}

/**
 * One endpoint, defined once and served on HTTP and MCP: its spec as defineTool returns it, with the full
 * `description` (the generated price sentence appended) and, for a paid tool, the derived `price` table.
 */
export interface ToolDefinition<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> extends ToolFields<
  I,
  O
> {
  /** The input schema, its top-level object strict (built on first read). */
  readonly input: I;
  /** The output schema (built on first read). */
  readonly output: O;
  /** Price per call in the asset's smallest units by price-table column, derived from `pricing` by the pricing rules. */
  price?: PriceTable;
}

/** A spec with a payment policy: defineTool makes it a paid tool. */
export type PaidToolSpec<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> = ToolSpec<I, O> & {
  pricing: PaymentPolicy;
};

/** A tool that has a price: what the payment side (broker, requirements, discovery of prices) works with. */
export type PaidToolDefinition<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> = ToolDefinition<
  I,
  O
> & { pricing: PaymentPolicy; price: PriceTable };

/** A tool definition with its generic types erased, as transports see it. */
export type AnyToolDefinition = ToolDefinition<z.ZodType, z.ZodType>;

/** A paid tool definition with its generic types erased, as the payment side sees it. */
export type AnyPaidToolDefinition = PaidToolDefinition<z.ZodType, z.ZodType>;

/** True when the tool has a price policy, i.e. every call is paid through the broker (the only way to ask). */
export function isPaid<T extends { pricing?: PaymentPolicy; price?: PriceTable }>(
  tool: T,
): tool is T & { pricing: PaymentPolicy; price: PriceTable } {
  // defineTool derives `price` from `pricing`: the two are set together.
  return isPaidEndpoint(tool) && tool.price !== undefined;
}

/**
 * Error message for an object's unknown fields, naming them and the fields the object takes (root: the endpoint).
 * Pass it as `{ error: unknownFields }` to a nested `z.strictObject` of an input so it answers like the top level.
 */
export function unknownFields(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code !== 'unrecognized_keys') return undefined;
  const prefix = (issue.path ?? []).map(String).join('.');
  const named = issue.keys.map((key) => (prefix ? `${prefix}.${key}` : key));
  const shape = (issue.inst as z.ZodObject | undefined)?._zod.def.shape ?? {};
  const takes = Object.keys(shape).join(', ') || 'no fields';
  const owner = prefix ? prefix : 'This endpoint';
  return `Unknown field${named.length > 1 ? 's' : ''}: ${named.join(', ')}. ${owner} takes: ${takes}.`;
}

/** The top-level fields a tool's input takes, in definition order (for messages that say what to send). */
export function inputFields(tool: { input: unknown }): string[] {
  return tool.input instanceof z.ZodObject ? Object.keys(tool.input.shape) : [];
}

/**
 * The input as every transport checks it: its top-level object made strict, so an unknown field (a typo such as
 * `chian`, or an input meant for another tool) is refused with invalid_input before any payment is read, instead
 * of being dropped while the call is charged on defaults. Keeps the object's checks and its description.
 */
function strictInput<I extends z.ZodType>(name: string, input: I): I {
  if (!(input instanceof z.ZodObject))
    throw new Error(`${name}: the input schema must be a z.object(...), whose fields are the tool's inputs`);
  const own = input._zod.def.error;
  const strict = input.clone({
    ...input._zod.def,
    catchall: z.never(),
    error: (issue) => unknownFields(issue) ?? own?.(issue),
  });
  const meta = z.globalRegistry.get(input);
  if (meta) {
    const { id: _id, ...rest } = meta;
    z.globalRegistry.add(strict, rest);
  }
  return strict as unknown as I;
}

/** A schema as a spec gives it: itself, or the function that builds it. */
function schemaOf<T extends z.ZodType>(schema: T | (() => T)): T {
  return typeof schema === 'function' ? (schema as () => T)() : schema;
}

/**
 * Keeps a tool's input and output types linked to its handler; its input refuses unknown fields; its description gets
 * the generated price sentence, and a paid tool its price table derived from the dollar price.
 */
export function defineTool<I extends z.ZodType, O extends z.ZodType>(
  spec: PaidToolSpec<I, O>,
): PaidToolDefinition<I, O>;
/** Keeps a free tool's input and output types linked to its handler; its input refuses unknown fields. */
export function defineTool<I extends z.ZodType, O extends z.ZodType>(spec: ToolSpec<I, O>): ToolDefinition<I, O>;
export function defineTool<I extends z.ZodType, O extends z.ZodType>(spec: ToolSpec<I, O>): ToolDefinition<I, O> {
  const { input, output, ...fields } = spec;
  let strict: I | undefined;
  let built: O | undefined;
  return Object.defineProperties(
    {
      ...fields,
      description: describeTool(spec.description, spec.pricing),
      ...(spec.pricing ? { price: priceTable(spec.pricing) } : {}),
    },
    {
      input: { enumerable: true, get: () => (strict ??= strictInput(spec.name, schemaOf(input))) },
      output: { enumerable: true, get: () => (built ??= schemaOf(output)) },
    },
  ) as ToolDefinition<I, O>;
}
