/**
 * Where remote mode learns a seller's tools: its MCP endpoint's tools/list (calls then go out as tools/call), or its
 * `/.well-known/x402` discovery document (one tool per HTTP item, called over HTTP), or its OpenAPI document
(src/agent/openapi-source.ts). What a remote publishes is data:
 * names, descriptions and JSON schemas are read, bounded and passed on, never compiled.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { httpResource, isObject, readWellKnown, type Json } from './documents.js';
import { buildRequest, type ToolMethod } from './http.js';
import type { McpRemotes } from './mcp-remote.js';
import type { RemoteRequest } from './remote.js';

/** One tool as a source publishes it, before it gets its local name. */
export interface SourceItem {
  /** The name the remote knows it by. */
  name: string;
  description?: string;
  /** The JSON schema of its input, as published (an object schema). */
  inputSchema: Tool['inputSchema'];
  title?: string;
  annotations?: Tool['annotations'];
  _meta?: Record<string, unknown>;
  /** The request one call with `input` makes. */
  request: (input: unknown) => RemoteRequest;
}

/** What one source gave: its kind, where it was read, the items. */
export interface SourceResult {
  source: 'mcp' | 'x402-discovery' | 'openapi';
  /** The MCP endpoint or the discovery document's URL. */
  at: string;
  items: SourceItem[];
  /** Published items left out, each with the reason (an OpenAPI operation whose schema could not be read). */
  refused?: string[];
}

/** Bounds on what is read from one remote. */
export interface SourceLimits {
  timeoutMs: number;
  /** At most this many tools are read. */
  maxTools: number;
  /** Largest discovery document read, in bytes. */
  maxDocumentBytes: number;
}

/** The MCP endpoint to probe for a remote URL: the URL itself when its path ends in /mcp, else `<url>/mcp`. */
export function mcpUrlOf(url: string): string {
  const trimmed = url.replace(/\/+$/, '');
  return /\/mcp$/.test(new URL(trimmed).pathname) ? trimmed : `${trimmed}/mcp`;
}

/**
 * Reads a remote MCP endpoint's tools/list through `remotes`; each call is a tools/call of the same tool on the same
 * endpoint.
 */
export async function probeMcp(url: string, limits: SourceLimits, remotes: McpRemotes): Promise<SourceResult> {
  const at = mcpUrlOf(url);
  const tools = await remotes.listTools(at, limits.timeoutMs, limits.maxTools);
  const items = tools.map((tool): SourceItem => ({
    name: tool.name,
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
    ...(tool._meta !== undefined ? { _meta: tool._meta } : {}),
    inputSchema: tool.inputSchema,
    request: (input) => ({ url: at, method: 'POST', mcp: { tool: tool.name, args: input ?? {} } }),
  }));
  return { source: 'mcp', at, items };
}

/** The methods a discovery item may name (as for OpenAPI operations): the query carries GET and DELETE inputs. */
const ITEM_METHODS: readonly ToolMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * The input schema an x402 discovery item publishes: its own `inputSchema`, else the bazaar extension's (its
 * `info.input.inputSchema`, or the query or body part of its declaration schema); else any object.
 */
function itemInputSchema(item: Json, method: string): Tool['inputSchema'] {
  const own = item.inputSchema;
  if (isObject(own) && own.type === 'object') return own as Tool['inputSchema'];
  const bazaar = isObject(item.extensions) ? item.extensions.bazaar : undefined;
  const info = isObject(bazaar) && isObject(bazaar.info) ? bazaar.info.input : undefined;
  if (isObject(info) && isObject(info.inputSchema) && info.inputSchema.type === 'object')
    return info.inputSchema as Tool['inputSchema'];
  const schema = isObject(bazaar) && isObject(bazaar.schema) ? bazaar.schema : undefined;
  const input = schema && isObject(schema.properties) ? schema.properties.input : undefined;
  const fields = isObject(input) && isObject(input.properties) ? input.properties : undefined;
  const part = fields ? (method === 'GET' || method === 'DELETE' ? fields.queryParams : fields.body) : undefined;
  if (isObject(part) && part.type === 'object') return part as Tool['inputSchema'];
  return { type: 'object' };
}

/**
 * One HTTP item of a discovery document as a tool (undefined when it is not one: no http(s) URL, a method other than
 * GET, POST, PUT, PATCH or DELETE); a relative resource is resolved against the document's URL `at`.
 */
function httpItem(raw: unknown, at: string): SourceItem | undefined {
  const found = httpResource(raw, at);
  if (!found) return undefined;
  const { item, url: resource } = found;
  const named = typeof item.method === 'string' ? item.method.toUpperCase() : 'GET';
  const method = ITEM_METHODS.find((m) => m === named);
  if (!method) return undefined;
  const lastSegment = resource.pathname.split('/').filter(Boolean).pop() ?? resource.hostname;
  const name = typeof item.name === 'string' && item.name ? item.name : lastSegment;
  const price = isObject(item.price) ? { 'x402/price': item.price } : {};
  return {
    name,
    ...(typeof item.description === 'string' ? { description: item.description } : {}),
    inputSchema: itemInputSchema(item, method),
    ...(Object.keys(price).length > 0 ? { _meta: price } : {}),
    request: (input) => buildRequest(resource.href, { method, path: '' }, input),
  };
}

/** Reads `<origin>/.well-known/x402`: its `items` (the bazaar's discovery-list shape), else its bare `resources` URLs. */
export async function probeWellKnown(url: string, limits: SourceLimits): Promise<SourceResult> {
  const { at, items: listed } = await readWellKnown(url, {
    timeoutMs: limits.timeoutMs,
    maxBytes: limits.maxDocumentBytes,
  });
  const items = listed
    .slice(0, limits.maxTools * 2)
    .map((item: unknown) => httpItem(item, at))
    .filter((i): i is SourceItem => i !== undefined)
    .slice(0, limits.maxTools);
  if (items.length === 0) throw new Error(`${at} lists no HTTP resource`);
  return { source: 'x402-discovery', at, items };
}
