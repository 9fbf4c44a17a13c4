import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A CommonJS package loaded the first time it is used, synchronously: heavy libraries that only some calls need
 * (password dictionaries, the Solidity lexer, indicator maths) cost nothing at start-up or while idle.
 */
export function lazyRequire<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(name) as T);
}
