/**
 * Remote mode's third source: a seller's OpenAPI document (x402scan's discovery format, and MPP's: mppx serves its
 * discovery as OpenAPI at `/openapi.json`). Each GET or POST operation carrying `x-payment-info` becomes one HTTP tool:
 * its name from the operationId, its input schema from the query and path parameters and the JSON request body (local
 * `$ref`s inlined, bounded), its published price from `x-payment-info`. The document is data, never compiled.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { isObject, readJsonObject, type Json } from './documents.js';
import { buildRequest } from './http.js';
import { inlineRefs } from './json-refs.js';
import type { SourceItem, SourceLimits, SourceResult } from './sources.js';

/** The documents tried for a remote URL, in order: the URL itself (unless it is an origin or an MCP endpoint), then the origin's `/openapi.json` and `/.well-known/openapi.json`. */
function openApiCandidates(url: string): string[] {
  const u = new URL(url);
  const own = u.pathname !== '/' && !/\/mcp\/?$/.test(u.pathname) ? [u.href] : [];
  return [...new Set([...own, new URL('/openapi.json', u).href, new URL('/.well-known/openapi.json', u).href])];
}

/**
 * A tool name from an operationId, else (as for `/.well-known/x402` items) the path's last segment that is not a
 * parameter, with `_get` or `_post` when both methods of the path are paid; other characters become `_`.
 */
function operationName(op: Json, method: string, path: string, both: boolean): string {
  const segment = path
    .split('/')
    .filter((s) => s && !s.includes('{'))
    .pop();
  const fallback = `${segment ?? 'root'}${both ? `_${method.toLowerCase()}` : ''}`;
  const raw = typeof op.operationId === 'string' && op.operationId ? op.operationId : fallback;
  return raw
    .replace(/[^A-Za-z0-9_.-]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 64);
}

/** Dollars as published (`"0.01"`, `"$0.01"`, `0.01`); undefined when it is not a positive decimal. */
function dollars(value: unknown): string | undefined {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.replace(/^\$/, '') : '';
  return /^\d+(\.\d+)?$/.test(text) && Number(text) > 0 ? text : undefined;
}

/**
 * The price `x-payment-info` publishes, in dollars: x402scan's `price` (`pricingMode: "fixed"`) or `maxPrice`
 * (`"range"`), or a `price: { amount, currency: "USD" }`; none for a quote or an amount in a token's own units (MPP).
 */
function publishedUsd(info: Json): string | undefined {
  const currency = typeof info.currency === 'string' ? info.currency.toUpperCase() : 'USD';
  if (currency !== 'USD' || info.pricingMode === 'quote') return undefined;
  if (info.pricingMode === 'range') return dollars(info.maxPrice);
  if (isObject(info.price))
    return String(info.price.currency ?? 'USD').toUpperCase() === 'USD' ? dollars(info.price.amount) : undefined;
  return dollars(info.price);
}

/** The base URL of an operation: the first server of the operation, its path or the document (`{var}`s filled with their defaults), else the document's origin. */
function serverOf(op: Json, pathItem: Json, doc: Json, at: string): string {
  for (const servers of [op.servers, pathItem.servers, doc.servers]) {
    const server = Array.isArray(servers) ? servers.find((s) => isObject(s) && typeof s.url === 'string') : undefined;
    if (!isObject(server)) continue;
    const vars = isObject(server.variables) ? server.variables : {};
    const url = new URL(
      (server.url as string).replace(/\{([^}]*)\}/g, (_m, name: string) => {
        const v = vars[name];
        return isObject(v) && typeof v.default === 'string' ? v.default : '';
      }),
      at,
    );
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('its server is not an http(s) URL');
    return url.href.replace(/\/+$/, '');
  }
  return new URL(at).origin;
}

/** The input schema of an operation: its query and path parameters, and the properties of its JSON body. */
function inputOf(op: Json, pathItem: Json, doc: Json): Tool['inputSchema'] {
  const properties: Json = {};
  const required: string[] = [];
  const listed = [pathItem.parameters, op.parameters].flatMap((p) => (Array.isArray(p) ? p : []));
  for (const raw of listed.slice(0, 100)) {
    const param = inlineRefs(raw, doc);
    if (!isObject(param) || typeof param.name !== 'string' || (param.in !== 'query' && param.in !== 'path')) continue;
    const schema = isObject(param.schema) ? param.schema : {};
    const described = typeof param.description === 'string' ? { description: param.description } : {};
    properties[param.name] = { ...schema, ...described };
    if (param.required === true || param.in === 'path') required.push(param.name);
  }
  const body = op.requestBody === undefined ? undefined : inlineRefs(op.requestBody, doc);
  const content = isObject(body) && isObject(body.content) ? body.content : {};
  const type = Object.keys(content).find((t) => t.includes('json'));
  const schema = type && isObject(content[type]) ? content[type].schema : undefined;
  if (body !== undefined && !isObject(schema)) throw new Error('its request body has no JSON schema');
  if (isObject(schema) && schema.type !== 'object' && !isObject(schema.properties))
    throw new Error('its request body is not a JSON object');
  const own = isObject(schema) ? schema : {};
  const ownRequired = Array.isArray(own.required) ? own.required.filter((r) => typeof r === 'string') : [];
  const allRequired = [...new Set([...ownRequired, ...required])];
  return {
    ...own,
    type: 'object',
    properties: { ...(isObject(own.properties) ? own.properties : {}), ...properties },
    ...(allRequired.length > 0 ? { required: allRequired } : {}),
  } as Tool['inputSchema'];
}

/** `/items/{id}` as the caller's `/items/:id`; throws on a parameter name the caller cannot fill. */
function callerPath(path: string): string {
  return path.replace(/\{([^}]*)\}/g, (_m, name: string) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new Error(`its path parameter {${name.slice(0, 40)}} has an unusable name`);
    return `:${name}`;
  });
}

/** Whether a value is an operation carrying `x-payment-info`. */
const paidOperation = (op: unknown): op is Json => isObject(op) && isObject(op['x-payment-info']);

interface Operation {
  doc: Json;
  at: string;
  path: string;
  pathItem: Json;
  method: 'GET' | 'POST';
  op: Json;
}

/** One paid operation as a tool; throws a sentence when it cannot be one. */
function operationItem({ doc, at, path, pathItem, method, op }: Operation): SourceItem {
  const info = op['x-payment-info'] as Json;
  const base = serverOf(op, pathItem, doc, at);
  const template = callerPath(path);
  const inputSchema = inputOf(op, pathItem, doc);
  const text = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  const description = text(op.description) ?? text(op.summary) ?? text(info.description);
  const usd = publishedUsd(info);
  return {
    name: operationName(op, method, path, paidOperation(pathItem.get) && paidOperation(pathItem.post)),
    ...(description ? { description } : {}),
    ...(text(op.summary) && text(op.description) ? { title: text(op.summary)!.slice(0, 200) } : {}),
    inputSchema,
    ...(usd ? { _meta: { 'x402/price': { usd, currency: 'USD' } } } : {}),
    request: (input) => buildRequest(base, { method, path: template }, input),
  };
}

/** The paid operations of an OpenAPI document as tools, and why any paid one was left out; throws when none is left. */
function operationsOf(doc: Json, at: string, limits: SourceLimits): SourceResult {
  const items: SourceItem[] = [];
  const refused: string[] = [];
  const paths = isObject(doc.paths) ? Object.entries(doc.paths) : [];
  for (const [path, pathItem] of paths.slice(0, limits.maxTools * 10)) {
    for (const method of ['GET', 'POST'] as const) {
      const op = isObject(pathItem) ? pathItem[method.toLowerCase()] : undefined;
      if (!paidOperation(op) || items.length >= limits.maxTools) continue;
      try {
        items.push(operationItem({ doc, at, path, pathItem: pathItem as Json, method, op }));
      } catch (err) {
        refused.push(`${method} ${path.slice(0, 80)}: ${(err as Error).message}`);
      }
    }
  }
  if (items.length === 0)
    throw new Error(
      refused.length > 0
        ? `${at} has no paid operation this agent can call (${refused[0]})`
        : `${at} has no GET or POST operation with x-payment-info`,
    );
  return { source: 'openapi', at, items, ...(refused.length > 0 ? { refused } : {}) };
}

/** Reads the first OpenAPI document among {@link openApiCandidates} (all within one time limit) and its paid operations. */
export async function probeOpenApi(url: string, limits: SourceLimits): Promise<SourceResult> {
  const deadline = Date.now() + limits.timeoutMs;
  const reasons: string[] = [];
  for (const at of openApiCandidates(url)) {
    const timeoutMs = deadline - Date.now();
    if (timeoutMs <= 0) break;
    let doc: Json;
    try {
      doc = await readJsonObject(at, { timeoutMs, maxBytes: limits.maxDocumentBytes });
    } catch (err) {
      reasons.push((err as Error).message);
      continue;
    }
    if (typeof doc.openapi !== 'string' || !isObject(doc.paths)) {
      reasons.push(`${at} is not an OpenAPI document`);
      continue;
    }
    return operationsOf(doc, at, limits);
  }
  throw new Error(reasons.join('; ') || `no OpenAPI document within ${limits.timeoutMs} ms`);
}
