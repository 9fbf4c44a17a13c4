import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { defineTool } from '../../src/tool/tool.js';
import { inputJsonSchema } from '../../src/tool/tool-schema.js';
import { annuity } from '../../tools/annuity.js';

/** A tool whose schemas are functions, counting how often each is built. */
function countingTool() {
  const built = { input: 0, output: 0 };
  const tool = defineTool({
    name: 'counted',
    title: 'Counted',
    description: 'Test tool whose schemas count their builds.',
    group: 'tools',
    method: 'POST',
    path: '/api/test/counted',
    input: () => {
      built.input++;
      return z.object({ n: z.number().describe('A number.') });
    },
    output: () => {
      built.output++;
      return z.object({ doubled: z.number() });
    },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: ({ n }) => ({ doubled: n * 2 }),
  });
  return { tool, built };
}

describe('a tool whose schemas are functions', () => {
  it('builds no schema when it is defined, each one on its first read, and never again', () => {
    const { tool, built } = countingTool();
    expect(built).toEqual({ input: 0, output: 0 });
    expect(tool.input.parse({ n: 2 })).toEqual({ n: 2 });
    expect(tool.input).toBe(tool.input);
    expect(built).toEqual({ input: 1, output: 0 });
    expect(tool.output.parse({ doubled: 4 })).toEqual({ doubled: 4 });
    expect(tool.output).toBe(tool.output);
    expect(built).toEqual({ input: 1, output: 1 });
  });

  it('gets the same strict input as a tool that gives its schema itself: unknown fields refused, descriptions kept', () => {
    const { tool } = countingTool();
    const unknown = tool.input.safeParse({ n: 1, m: 2 });
    expect(unknown.success).toBe(false);
    expect(unknown.error?.issues[0]?.message).toMatch(/Unknown field: m\. This endpoint takes: n\./);
    expect(inputJsonSchema(tool)).toMatchObject({ properties: { n: { type: 'number', description: 'A number.' } } });
  });

  it('keeps its schemas when the definition is copied, as a registered tool is', () => {
    const copy = { ...annuity, name: 'annuity-copy' };
    expect(copy.input).toBe(annuity.input);
    expect(copy.output).toBe(annuity.output);
  });
});
