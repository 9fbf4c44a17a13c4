/**
 * Remote mode's tool list, built from what each remote publishes (src/agent/sources.ts): its MCP endpoint first, else
 * its `/.well-known/x402` document, else its OpenAPI document's paid operations (src/agent/openapi-source.ts). Each remote is probed once at start, within a time limit, and says in one log line
 * which source it used or why none; its tools get an optional prefix, valid MCP names, and bounded schemas.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Logger } from '../shared/log.js';
import type { ToolGroup } from '../shared/tool-endpoint.js';
import type { CallTarget } from './call.js';
import { publishedPriceMicros } from './origins.js';
import { depthWithin } from './documents.js';
import type { McpRemotes } from './mcp-remote.js';
import { probeOpenApi } from './openapi-source.js';
import { probeMcp, probeWellKnown, type SourceItem, type SourceLimits, type SourceResult } from './sources.js';

/** One remote as configured: its URL and the prefix of its tools' names (`--remote weather=https://…`). */
export interface RemoteSpec {
  url: string;
  prefix?: string;
}

/** One remote tool as remote mode serves it: its tools/list entry and how the caller reaches it. */
export interface CatalogTool {
  entry: Tool;
  target: CallTarget;
}

/** Bounds on what one remote may publish. */
export const CATALOG_LIMITS = {
  /** Tools read per remote. */
  maxTools: 100,
  /** Bytes of one tool's input schema (and of its `_meta`) as JSON; a tool over it is left out. */
  maxSchemaBytes: 16 * 1024,
  /** Nesting levels of one tool's input schema (and of its `_meta`); a tool over it is left out. */
  maxSchemaDepth: 32,
  /** Characters of a description kept. */
  maxDescription: 2000,
  /** Bytes of a discovery document. */
  maxDocumentBytes: 1024 * 1024,
  /** Time limit of one probe, in milliseconds. */
  probeMs: 10_000,
} as const;

/** A valid MCP tool name: 1 to 128 of A-Z, a-z, 0-9, `_`, `-`, `.`. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** A remote URL as logged: origin and path, never credentials or query (which may carry a token). */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

/** The remotes of the settings (REMOTE_URL and the group URLs), each once, without a prefix. */
export function remotesOfSettings(remote: Partial<Record<ToolGroup, string>>): RemoteSpec[] {
  return [...new Set(Object.values(remote))].map((url) => ({ url }));
}

const SOURCES = [
  ['mcp', probeMcp],
  ['/.well-known/x402', probeWellKnown],
  ['openapi', probeOpenApi],
] as const;

/**
 * The sources read for a remote URL, in order: only `/.well-known/x402` when the URL names it, only OpenAPI when it
 * names a JSON document (`…/openapi.json`), else its MCP endpoint, its `/.well-known/x402`, then its OpenAPI document.
 */
function sourcesFor(url: string): ReadonlyArray<(typeof SOURCES)[number]> {
  const path = URL.canParse(url) ? new URL(url).pathname.replace(/\/+$/, '') : '';
  if (path === '/.well-known/x402') return SOURCES.slice(1, 2);
  if (/\.json$/i.test(path)) return SOURCES.slice(2);
  return SOURCES;
}

/** Probes one remote's sources in order (see {@link sourcesFor}); the reasons when none answered. */
async function probe(
  url: string,
  limits: SourceLimits,
  mcp: McpRemotes,
): Promise<SourceResult | { reasons: string[] }> {
  const reasons: string[] = [];
  for (const [kind, source] of sourcesFor(url)) {
    try {
      return await source(url, limits, mcp);
    } catch (err) {
      reasons.push(`${kind}: ${(err as Error).message.split('\n', 1)[0]!.slice(0, 300)}`);
    }
  }
  return { reasons };
}

const byteLength = (value: unknown) => (value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value)));

/** One item as a catalog tool named `name`; undefined when its schema or `_meta` is over the size limit. */
function catalogTool(name: string, item: SourceItem): CatalogTool | undefined {
  if (
    !depthWithin(item.inputSchema, CATALOG_LIMITS.maxSchemaDepth) ||
    !depthWithin(item._meta, CATALOG_LIMITS.maxSchemaDepth)
  )
    return undefined;
  if (byteLength(item.inputSchema) > CATALOG_LIMITS.maxSchemaBytes) return undefined;
  if (byteLength(item._meta) > CATALOG_LIMITS.maxSchemaBytes) return undefined;
  const entry: Tool = {
    name,
    ...(item.title !== undefined ? { title: item.title } : {}),
    ...(item.description !== undefined
      ? { description: item.description.slice(0, CATALOG_LIMITS.maxDescription) }
      : {}),
    inputSchema: item.inputSchema,
    ...(item.annotations !== undefined ? { annotations: item.annotations } : {}),
    ...(item._meta !== undefined ? { _meta: item._meta } : {}),
  };
  // The remote checks the input (its schema is passed on, not compiled here) and answers for its output.
  const target: CallTarget = {
    name,
    group: 'tools',
    method: 'POST',
    path: '',
    input: z.unknown(),
    output: z.unknown(),
    paid: true,
    request: item.request,
  };
  const expected = publishedPriceMicros(item._meta);
  if (expected !== undefined) target.expectedUsdMicros = expected;
  return { entry, target };
}

/** Adds one remote's items under their local names; counts those left out (invalid name, taken name, too large). */
function addItems(spec: RemoteSpec, items: SourceItem[], taken: Set<string>, out: CatalogTool[]): number {
  let skipped = 0;
  for (const item of items) {
    const name = spec.prefix ? `${spec.prefix}_${item.name}` : item.name;
    const tool = TOOL_NAME.test(name) && !taken.has(name) ? catalogTool(name, item) : undefined;
    if (!tool) {
      skipped++;
      continue;
    }
    taken.add(name);
    out.push(tool);
  }
  return skipped;
}

/**
 * Builds the tool list of `remotes`, in their order (a name already taken, by an earlier remote or by one of
 * `reserved`, is left out); probes run in parallel, each within the probe time limit (or `timeoutMs` when shorter).
 * MCP endpoints are listed through `mcp` (its connections stay open for the calls).
 */
export async function loadCatalog(
  mcp: McpRemotes,
  remotes: readonly RemoteSpec[],
  timeoutMs: number,
  log: Logger,
  reserved: readonly string[] = [],
): Promise<CatalogTool[]> {
  const limits: SourceLimits = {
    timeoutMs: Math.min(timeoutMs, CATALOG_LIMITS.probeMs),
    maxTools: CATALOG_LIMITS.maxTools,
    maxDocumentBytes: CATALOG_LIMITS.maxDocumentBytes,
  };
  const probed = await Promise.all(remotes.map((spec) => probe(spec.url, limits, mcp)));
  const taken = new Set(reserved);
  const out: CatalogTool[] = [];
  remotes.forEach((spec, i) => {
    const result = probed[i]!;
    const remote = shownUrl(spec.url);
    if ('reasons' in result) {
      log.warn('remote: no tool source answered; it serves no tools', { remote, reasons: result.reasons });
      return;
    }
    const skipped = addItems(spec, result.items, taken, out);
    log.info('remote: tools read', {
      remote,
      source: result.source,
      at: shownUrl(result.at),
      tools: result.items.length - skipped,
      ...(spec.prefix ? { prefix: spec.prefix } : {}),
      ...(skipped > 0 ? { skipped } : {}),
      ...(result.refused ? { refused: result.refused.slice(0, 5) } : {}),
    });
  });
  return out;
}
