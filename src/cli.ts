#!/usr/bin/env node
import module from 'node:module';

// Node 22+ keeps compiled code on disk between runs (MCP clients start a stdio server per conversation); no-op on 20.
// Enabled before the CLI itself loads (./cli/start.ts), so the cache covers every module of a start, not only the
// ones imported after this line ran.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();

await import('./cli/start.js');
