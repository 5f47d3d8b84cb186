import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['__test__/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Child processes and servers per test file: keep the 2-core machines unhurried.
    maxWorkers: 2,
    // The soak measures memory after a full collection.
    execArgv: ['--expose-gc'],
  },
});
