import { defineConfig } from 'vitest/config';

/** The reliability suite (`npm run test:reliability`): faults injected into running processes. */
export default defineConfig({
  test: {
    include: ['test/reliability/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One file at a time: each one saturates the machine on purpose.
    fileParallelism: false,
  },
});
