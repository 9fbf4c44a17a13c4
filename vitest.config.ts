import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // One worker process runs many files in turn and keeps the modules it loaded: each file no longer pays a fresh
    // process's import of viem, the x402 packages and the MCP SDK (about 1.5 s a file, a fifth of a CI run). Test files
    // start their own servers and stores and close them, so nothing is shared between files but loaded code.
    isolate: false,
    fileParallelism: true,
    // Three workers on a two-core CI machine: the end-to-end files spend much of their time waiting on child
    // processes, chains and timers, so two workers left a core part idle. Measured on one 2-core VM: 2,352 tests in
    // 777 s with two workers (in CI), 648 s with three, all passing.
    maxWorkers: 3,
    // In CI a JSON report is written too, so .ci/run can print a plain "N passed, N failed" line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: 'test-results.json' }]] : ['default'],
  },
});
