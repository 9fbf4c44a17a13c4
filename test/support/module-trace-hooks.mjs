// Module resolution hooks that append every resolved URL to the file named by TOLLBOOTH_MODULE_TRACE (tests only).
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(process.env.TOLLBOOTH_MODULE_TRACE, `${resolved.url}\n`);
  return resolved;
}
