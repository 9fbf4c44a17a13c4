/**
 * Reading a Bazaar-style discovery API page by page: `GET <base>/discovery/resources?type=http&limit=&offset=`
 * answers `{ x402Version, items, pagination: { limit, offset, total } }`. Pages are followed until the caller has
 * enough, the index is exhausted, or a bound is hit (pages, bytes over all pages, one time limit for the whole index):
 * an index that never ends, or ignores the offset, costs at most those bounds.
 */
import { isObject, OversizeError, readJsonPage } from './documents.js';

/** Bounds on reading one index's pages. */
export interface PageLimits {
  /** Items asked for per page (the index may answer fewer). */
  pageSize: number;
  /** Most pages read. */
  maxPages: number;
  /** Most bytes read over all pages. */
  maxBytes: number;
  /** Time limit for all pages together. */
  timeoutMs: number;
}

/** What the pages gave: the items in order, and why reading stopped before the index was exhausted (if it did). */
export interface PagesRead {
  at: string;
  items: unknown[];
  /** Set when a later page could not be read (the earlier pages' items are kept); not for a bound reached. */
  failed?: string;
}

/** A non-negative integer, or undefined. */
const count = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined;

/** The URL of the page at `offset`. */
const pageUrl = (base: string, size: number, offset: number) =>
  `${base}/discovery/resources?type=http&limit=${size}&offset=${offset}`;

/**
 * Reads pages while `enough(items so far, first page's URL)` is false; throws when the first page is not a discovery answer (the
 * caller then tries the origin's other documents). The next offset counts the items read so far (the
 * index's own `offset` is not trusted).
 */
export async function readDiscoveryPages(
  base: string,
  limits: PageLimits,
  enough: (items: readonly unknown[], at: string) => boolean,
): Promise<PagesRead> {
  // One deadline for every page; a reason names the whole limit the caller set.
  const deadline = AbortSignal.timeout(limits.timeoutMs);
  const first = pageUrl(base, limits.pageSize, 0);
  const items: unknown[] = [];
  let offset = 0;
  let bytes = 0;
  for (let page = 0; page < limits.maxPages; page++) {
    if (deadline.aborted || bytes >= limits.maxBytes) break;
    const at = pageUrl(base, limits.pageSize, offset);
    let read: Awaited<ReturnType<typeof readJsonPage>>;
    try {
      read = await readJsonPage(at, { timeoutMs: limits.timeoutMs, maxBytes: limits.maxBytes - bytes, deadline });
    } catch (err) {
      if (page === 0) throw err;
      if (err instanceof OversizeError) break;
      return { at: first, items, failed: `page ${page + 1} could not be read` };
    }
    const listed = Array.isArray(read.doc.items) ? read.doc.items : undefined;
    if (!listed) {
      if (page === 0) throw new Error(`${at} is not a discovery answer`);
      return { at: first, items, failed: `page ${page + 1} is not a discovery answer` };
    }
    bytes += read.bytes;
    items.push(...listed);
    offset += listed.length;
    const total = isObject(read.doc.pagination) ? count(read.doc.pagination.total) : undefined;
    if (listed.length === 0 || (total !== undefined && offset >= total) || enough(items, first)) break;
  }
  return { at: first, items };
}
