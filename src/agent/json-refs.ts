/**
 * Inlining the local `$ref`s of a schema published in a seller's document, so the tool's input schema stands alone.
 * The schema stays data: references are copied in (never fetched, never compiled), a loop, a reference outside the
 * document, nesting deeper than a limit or an expansion past a node budget is refused with a sentence saying which.
 */
import { isObject, type Json } from './documents.js';

/** Bounds on one inlining. */
interface InlineLimits {
  /** Deepest nesting of the result. */
  maxDepth: number;
  /** Most objects and arrays the result may hold (references repeated many times count each time). */
  maxNodes: number;
}

/** The default bounds: 32 levels, 5,000 nodes. */
const INLINE_LIMITS: InlineLimits = { maxDepth: 32, maxNodes: 5000 };

interface Walk extends InlineLimits {
  doc: Json;
  nodes: number;
  /** The references being expanded, outermost first. */
  active: string[];
}

const shown = (ref: string) => (ref.length > 80 ? `${ref.slice(0, 80)}…` : ref);

/** The value a local JSON pointer (`#/components/schemas/X`) names in `doc`. */
function resolve(doc: Json, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`$ref ${shown(ref)} is not local to the document`);
  let node: unknown = doc;
  for (const raw of ref.slice(2).split('/')) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      throw new Error(`$ref ${shown(ref)} is not a valid pointer`);
    }
    if (!isObject(node) && !Array.isArray(node)) throw new Error(`$ref ${shown(ref)} points nowhere`);
    if (!Object.hasOwn(node, key)) throw new Error(`$ref ${shown(ref)} points nowhere`);
    node = (node as Json)[key];
  }
  return node;
}

function inline(value: unknown, walk: Walk, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (depth > walk.maxDepth) throw new Error(`its schema nests deeper than ${walk.maxDepth} levels`);
  if (++walk.nodes > walk.maxNodes) throw new Error(`its schema expands to more than ${walk.maxNodes} nodes`);
  if (Array.isArray(value)) return value.map((v) => inline(v, walk, depth + 1));
  const { $ref: ref, ...rest } = value as Json;
  if (typeof ref === 'string') {
    if (walk.active.includes(ref)) throw new Error(`its schema has a $ref loop at ${shown(ref)}`);
    walk.active.push(ref);
    const target = inline(resolve(walk.doc, ref), walk, depth);
    walk.active.pop();
    if (Object.keys(rest).length === 0 || !isObject(target)) return target;
    // OpenAPI 3.1 allows keywords beside $ref: they add to (and win over) the referenced schema.
    return { ...target, ...(inline(rest, walk, depth) as Json) };
  }
  // fromEntries defines each key as data, so a `__proto__` key stays a plain key.
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inline(v, walk, depth + 1)]));
}

/** `value` with every local `$ref` replaced by what it names in `doc`; throws a sentence when it cannot be. */
export function inlineRefs(value: unknown, doc: Json, limits: InlineLimits = INLINE_LIMITS): unknown {
  return inline(value, { ...limits, doc, nodes: 0, active: [] }, 0);
}
