import type { Express, RequestHandler } from 'express';
import type { ServerDeps } from '../runtime/server-deps.js';
import { discoveryCatalog } from './catalog.js';
import { llmsText } from './llms.js';
import { openApiDocument } from './openapi.js';
import { wellKnownDocument } from './well-known.js';

/** Paths of the discovery documents. */
export const DISCOVERY_PATHS = {
  openapi: ['/openapi.json', '/.well-known/openapi.json'],
  /** x402scan's path, and the well-known discovery draft's `/.well-known/x402.json`: the same document. */
  wellKnown: ['/.well-known/x402', '/.well-known/x402.json'],
  llms: '/llms.txt',
} as const;

/** Answers with a document built on its first request and kept (nothing is built at start-up for it). */
function serve(type: string, build: () => string): RequestHandler {
  let body: string | undefined;
  return (_req, res) => {
    body ??= build();
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.type(type).send(body);
  };
}

/** Mounts GET /openapi.json (also under /.well-known), /.well-known/x402 (also as x402.json) and /llms.txt, each built once. */
export function mountDiscovery(app: Express, deps: ServerDeps): void {
  let catalog: ReturnType<typeof discoveryCatalog> | undefined;
  const catalogOf = () => (catalog ??= discoveryCatalog(deps));
  const openapi = serve('application/json', () => JSON.stringify(openApiDocument(catalogOf())));
  for (const path of DISCOVERY_PATHS.openapi) app.get(path, openapi);
  const wellKnown = serve('application/json', () => JSON.stringify(wellKnownDocument(catalogOf())));
  for (const path of DISCOVERY_PATHS.wellKnown) app.get(path, wellKnown);
  app.get(
    DISCOVERY_PATHS.llms,
    serve('text/plain; charset=utf-8', () => llmsText(catalogOf())),
  );
}
