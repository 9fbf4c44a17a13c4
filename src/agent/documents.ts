/**
 * Reading what a seller or an index publishes (a `/.well-known/x402` catalog, an OpenAPI document, a discovery API's
 * answer): one bounded reader — time limit, byte limit while streaming, nesting limit; JSON, and YAML for OpenAPI
 * documents — and the one reader of `/.well-known/x402`, for remote mode's sources and for `search_services`. What
 * is read is data, never compiled.
 */
import { parseYaml } from './yaml-document.js';

/** A JSON object as read. */
export type Json = Record<string, unknown>;

/** Whether a value is a JSON object (not an array, not null). */
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Bounds on one document read. */
export interface ReadLimits {
  timeoutMs: number;
  /** Largest document read, in bytes; a longer answer is refused without reading the rest. */
  maxBytes: number;
  /** A deadline shared with other reads (it fires after `timeoutMs` from the first of them); by default, one per read. */
  deadline?: AbortSignal;
}

/** The error of a document longer than the byte limit (the rest was not read). */
export class OversizeError extends Error {}

/** Deepest nesting of objects and arrays a document may have (deeper ones are refused before anything walks them). */
const MAX_JSON_DEPTH = 64;

/** Whether `value` nests objects and arrays at most `max` levels deep (walked without recursion). */
export function depthWithin(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= max) return false;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return true;
}

/** The body as text, reading at most `max` bytes: undefined when it is longer (the rest is not read). */
async function boundedText(res: Response, max: number): Promise<string | undefined> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel().catch(() => undefined);
    return undefined;
  }
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The error of a read that failed on the way: no answer in time, or the network's own reason. */
function unreadable(url: string, err: unknown, limits: ReadLimits, timeout: AbortSignal): Error {
  if (timeout.aborted) return new Error(`${url} gave no whole answer within ${limits.timeoutMs} ms`);
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return new Error(`${url} could not be read: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
}

/** GETs `url` and reads its body within the limits: the text, its size in bytes, and the declared content type. */
async function readText(
  url: string,
  limits: ReadLimits,
  accept: string,
): Promise<{ text: string; bytes: number; type: string }> {
  const timeout = limits.deadline ?? AbortSignal.timeout(limits.timeoutMs);
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept }, signal: timeout });
  } catch (err) {
    throw unreadable(url, err, limits, timeout);
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    throw new Error(`${url} answered ${res.status}`);
  }
  let text: string | undefined;
  try {
    text = await boundedText(res, limits.maxBytes);
  } catch (err) {
    throw unreadable(url, err, limits, timeout);
  }
  if (text === undefined) throw new OversizeError(`${url} is over ${limits.maxBytes} bytes`);
  return { text, bytes: Buffer.byteLength(text), type: (res.headers.get('content-type') ?? '').toLowerCase() };
}

/** A parsed document as an object: throws when it is another value or nests deeper than {@link MAX_JSON_DEPTH}. */
function objectOf(url: string, doc: unknown, kind: string): Json {
  if (!isObject(doc)) throw new Error(`${url} is not a ${kind} object`);
  if (!depthWithin(doc, MAX_JSON_DEPTH)) throw new Error(`${url} nests deeper than ${MAX_JSON_DEPTH} levels`);
  return doc;
}

function parseJson(url: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${url} is not JSON`);
  }
}

/**
 * GETs a JSON object within the limits, with its size in bytes; throws a sentence naming the URL on a non-2xx
 * answer, an oversized body, non-JSON, a value other than an object, or nesting deeper than {@link MAX_JSON_DEPTH}.
 */
export async function readJsonPage(url: string, limits: ReadLimits): Promise<{ doc: Json; bytes: number }> {
  const { text, bytes } = await readText(url, limits, 'application/json');
  return { doc: objectOf(url, parseJson(url, text), 'JSON'), bytes };
}

/** GETs a JSON object within the limits (see {@link readJsonPage}). */
export async function readJsonObject(url: string, limits: ReadLimits): Promise<Json> {
  return (await readJsonPage(url, limits)).doc;
}

/**
 * GETs a JSON or YAML object (an OpenAPI document) within the same limits. YAML when the content type says so or,
 * with no JSON content type, when the path ends in `.yaml`/`.yml`; JSON when the content type or the `.json` path
 * says so; otherwise JSON, else YAML. YAML is read as data only (yaml-document.ts).
 */
export async function readJsonOrYamlObject(url: string, limits: ReadLimits): Promise<Json> {
  const { text, type } = await readText(url, limits, 'application/json, application/yaml;q=0.9, text/yaml;q=0.8');
  const path = new URL(url).pathname.toLowerCase();
  const yaml = type.includes('yaml') || (!type.includes('json') && /\.ya?ml$/.test(path));
  if (yaml) return objectOf(url, await parseYaml(text, url), 'YAML');
  if (type.includes('json') || path.endsWith('.json')) return objectOf(url, parseJson(url, text), 'JSON');
  try {
    return objectOf(url, JSON.parse(text), 'JSON');
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
  }
  const doc = await parseYaml(text, url).catch(() => {
    throw new Error(`${url} is neither JSON nor YAML`);
  });
  return objectOf(url, doc, 'YAML');
}

/** The `/.well-known/x402` document of a URL's origin. */
function wellKnownUrl(url: string): string {
  return new URL('/.well-known/x402', url).href;
}

/** Reads `<origin>/.well-known/x402`: its `items` (the bazaar's discovery-list shape), else its bare `resources`. */
export async function readWellKnown(url: string, limits: ReadLimits): Promise<{ at: string; items: unknown[] }> {
  const at = wellKnownUrl(url);
  const doc = await readJsonObject(at, limits);
  const items = Array.isArray(doc.items) ? doc.items : Array.isArray(doc.resources) ? doc.resources : [];
  return { at, items };
}

/**
 * One published item as an HTTP resource: the item as an object (a bare string is its `resource`) and its http(s)
 * URL, resolved against the document's URL `at`; undefined when it is not one (another type, no usable URL).
 */
export function httpResource(raw: unknown, at: string): { item: Json; url: URL } | undefined {
  const item: Json = typeof raw === 'string' ? { resource: raw } : isObject(raw) ? raw : {};
  if (item.type !== undefined && item.type !== 'http') return undefined;
  if (typeof item.resource !== 'string') return undefined;
  let url: URL;
  try {
    url = new URL(item.resource, at);
  } catch {
    return undefined;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? { item, url } : undefined;
}
