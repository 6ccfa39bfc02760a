import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    // Native and e2e tests spawn processes and build indexes; give them room on 2 cores.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
