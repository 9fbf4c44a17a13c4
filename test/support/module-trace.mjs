// `node --import <this file>`: records every module the process resolves, on each thread (see module-trace-hooks.mjs).
import { register } from 'node:module';
import { threadId } from 'node:worker_threads';
register(new URL('./module-trace-hooks.mjs', import.meta.url), { data: { thread: threadId } });
