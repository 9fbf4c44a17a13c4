/**
 * The JSON Schemas (2020-12) of a tool's input and output, derived once per zod schema and frozen: the x402 challenge,
 * the MCP catalog and the discovery documents all publish these same objects.
 */
import { z } from 'zod';

/** JSON Schema (2020-12) of a tool's input as a caller sends it. */
export function inputJsonSchema(tool: { input: z.ZodType }): Record<string, unknown> {
  return jsonSchemaOf(tool.input, 'input');
}

/** JSON Schema (2020-12) of a tool's output. */
export function outputJsonSchema(tool: { output: z.ZodType }): Record<string, unknown> {
  return jsonSchemaOf(tool.output, 'output');
}

/** JSON Schemas already derived, by zod schema and side: each is derived once (challenges, MCP, discovery share it). */
const derived = {
  input: new WeakMap<z.ZodType, Record<string, unknown>>(),
  output: new WeakMap<z.ZodType, Record<string, unknown>>(),
};

function jsonSchemaOf(type: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  let schema = derived[io].get(type);
  if (!schema) {
    schema = deepFreeze(z.toJSONSchema(type, { io, unrepresentable: 'any' }) as Record<string, unknown>);
    derived[io].set(type, schema);
  }
  return schema;
}

/** Freezes a JSON value at every depth (a shared schema must never be changed by one of its readers). */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
