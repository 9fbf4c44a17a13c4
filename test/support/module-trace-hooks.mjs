// Module resolution hooks that append every resolved URL, with the resolving thread's id (0 = the main thread) and the
// importing module's URL, to the file named by TOLLBOOTH_MODULE_TRACE (tests only): `<thread> <url> <parent>`.
import { appendFileSync } from 'node:fs';
let thread = '?';
export async function initialize(data) {
  thread = String(data?.thread ?? '?');
}
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(process.env.TOLLBOOTH_MODULE_TRACE, `${thread} ${resolved.url} ${context.parentURL ?? ''}\n`);
  return resolved;
}
