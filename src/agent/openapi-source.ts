/**
 * Remote mode's third source: a seller's OpenAPI document (x402scan's discovery format, and MPP's: mppx serves its
 * discovery as OpenAPI at `/openapi.json`), in JSON or YAML. Each GET, POST, PUT, PATCH or DELETE operation carrying
 * `x-payment-info` becomes one HTTP tool: its name from the operationId, its input schema from the query, path and
 * header parameters and the JSON request body (local `$ref`s inlined, bounded), its published price from
 * `x-payment-info`. A header parameter the agent will not send (http.ts `isRefusedHeader`: credentials, cookies,
 * hop-by-hop and payment headers) is dropped when optional, and refuses its operation when required. The document is
 * data, never compiled.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { isObject, readJsonOrYamlObject, type Json } from './documents.js';
import { buildRequest, isRefusedHeader, type ToolMethod } from './http.js';
import { inlineRefs } from './json-refs.js';
import type { SourceItem, SourceLimits, SourceResult } from './sources.js';

/** The documents tried for a remote URL, in order: the URL itself (unless it is an origin or an MCP endpoint), then the origin's `/openapi.json`, `/openapi.yaml`, `/openapi.yml` and `/.well-known/openapi.json`. */
function openApiCandidates(url: string): string[] {
  const u = new URL(url);
  const own = u.pathname !== '/' && !/\/mcp\/?$/.test(u.pathname) ? [u.href] : [];
  const paths = ['/openapi.json', '/openapi.yaml', '/openapi.yml', '/.well-known/openapi.json'];
  return [...new Set([...own, ...paths.map((p) => new URL(p, u).href)])];
}

/** The operation methods read, in order. */
const METHODS: readonly ToolMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * A tool name from an operationId, else (as for `/.well-known/x402` items) the path's last segment that is not a
 * parameter, with `_get`, `_put`… when several methods of the path are paid; other characters become `_`.
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

/** An operation's input: its JSON schema, and the names of the input fields sent as headers. */
interface Input {
  schema: Tool['inputSchema'];
  headers: string[];
}

/** The query, path and header parameters of an operation as properties (a refused optional header left out). */
function parametersOf(
  op: Json,
  pathItem: Json,
  doc: Json,
): { properties: Json; required: string[]; headers: string[] } {
  const properties: Json = {};
  const required: string[] = [];
  const headers: string[] = [];
  const listed = [pathItem.parameters, op.parameters].flatMap((p) => (Array.isArray(p) ? p : []));
  for (const raw of listed.slice(0, 100)) {
    const param = inlineRefs(raw, doc);
    if (!isObject(param) || typeof param.name !== 'string') continue;
    if (param.in !== 'query' && param.in !== 'path' && param.in !== 'header') continue;
    if (param.in === 'header' && isRefusedHeader(param.name)) {
      if (param.required === true)
        throw new Error(`it requires the header ${param.name.slice(0, 40)}, which this agent does not let a tool set`);
      continue;
    }
    if (param.in === 'header') headers.push(param.name);
    const schema = isObject(param.schema) ? param.schema : {};
    const described = typeof param.description === 'string' ? { description: param.description } : {};
    properties[param.name] = { ...schema, ...described };
    if (param.required === true || param.in === 'path') required.push(param.name);
  }
  return { properties, required, headers };
}

/** The input of an operation: its parameters, and the properties of its JSON body (none for GET-like DELETE). */
function inputOf(op: Json, pathItem: Json, doc: Json, method: ToolMethod): Input {
  const { properties, required, headers } = parametersOf(op, pathItem, doc);
  const body = op.requestBody === undefined ? undefined : inlineRefs(op.requestBody, doc);
  if (body !== undefined && method === 'DELETE') throw new Error('its DELETE has a request body, which is not sent');
  const content = isObject(body) && isObject(body.content) ? body.content : {};
  const type = Object.keys(content).find((t) => t.includes('json'));
  const schema = type && isObject(content[type]) ? content[type].schema : undefined;
  if (body !== undefined && !isObject(schema)) throw new Error('its request body has no JSON schema');
  if (isObject(schema) && schema.type !== 'object' && !isObject(schema.properties))
    throw new Error('its request body is not a JSON object');
  const own = isObject(schema) ? schema : {};
  const ownProperties = isObject(own.properties) ? own.properties : {};
  const clash = headers.find((h) => Object.hasOwn(ownProperties, h));
  if (clash) throw new Error(`its header ${clash.slice(0, 40)} has the name of a body field`);
  const ownRequired = Array.isArray(own.required) ? own.required.filter((r) => typeof r === 'string') : [];
  const allRequired = [...new Set([...ownRequired, ...required])];
  return {
    schema: {
      ...own,
      type: 'object',
      properties: { ...ownProperties, ...properties },
      ...(allRequired.length > 0 ? { required: allRequired } : {}),
    } as Tool['inputSchema'],
    headers,
  };
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
  method: ToolMethod;
  op: Json;
}

/** One paid operation as a tool; throws a sentence when it cannot be one. */
function operationItem({ doc, at, path, pathItem, method, op }: Operation): SourceItem {
  const info = op['x-payment-info'] as Json;
  const base = serverOf(op, pathItem, doc, at);
  const template = callerPath(path);
  const input = inputOf(op, pathItem, doc, method);
  const text = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  const description = text(op.description) ?? text(op.summary) ?? text(info.description);
  const usd = publishedUsd(info);
  return {
    name: operationName(op, method, path, METHODS.filter((m) => paidOperation(pathItem[m.toLowerCase()])).length > 1),
    ...(description ? { description } : {}),
    ...(text(op.summary) && text(op.description) ? { title: text(op.summary)!.slice(0, 200) } : {}),
    inputSchema: input.schema,
    ...(usd ? { _meta: { 'x402/price': { usd, currency: 'USD' } } } : {}),
    request: (args) => buildRequest(base, { method, path: template, headers: input.headers }, args),
  };
}

/** The paid operations of an OpenAPI document as tools, and why any paid one was left out; throws when none is left. */
function operationsOf(doc: Json, at: string, limits: SourceLimits): SourceResult {
  const items: SourceItem[] = [];
  const refused: string[] = [];
  const paths = isObject(doc.paths) ? Object.entries(doc.paths) : [];
  for (const [path, pathItem] of paths.slice(0, limits.maxTools * 10)) {
    for (const method of METHODS) {
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
        : `${at} has no GET, POST, PUT, PATCH or DELETE operation with x-payment-info`,
    );
  return { source: 'openapi', at, items, ...(refused.length > 0 ? { refused } : {}) };
}

/** Reads the first OpenAPI document among {@link openApiCandidates} (all within one time limit) and its paid operations. */
export async function probeOpenApi(url: string, limits: SourceLimits): Promise<SourceResult> {
  // One deadline for every candidate; a reason names the whole limit the caller set.
  const deadline = AbortSignal.timeout(limits.timeoutMs);
  const reasons: string[] = [];
  for (const at of openApiCandidates(url)) {
    if (deadline.aborted) break;
    let doc: Json;
    try {
      doc = await readJsonOrYamlObject(at, {
        timeoutMs: limits.timeoutMs,
        maxBytes: limits.maxDocumentBytes,
        deadline,
      });
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
