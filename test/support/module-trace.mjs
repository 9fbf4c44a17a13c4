// `node --import <this file>`: records every module the process resolves (see module-trace-hooks.mjs).
import { register } from 'node:module';
register(new URL('./module-trace-hooks.mjs', import.meta.url));
