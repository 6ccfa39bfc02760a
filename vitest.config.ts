import { defineConfig } from 'vitest/config';

// Three projects, one per folder of tests/ (CONTRIBUTING.md "Tests"):
//   npm run test:unit    no native addon, no child processes that build an index: seconds
//   npm run test:native  the addon through its TypeScript wrappers
//   npm run test:e2e     the real CLI spawned on temporary projects, the browser tests
// `vitest run` (npm test) runs all three.
export default defineConfig({
  test: {
    // Native and e2e tests spawn processes and build indexes; give them room on 2 cores.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['tests/unit/**/*.test.ts'],
          setupFiles: ['tests/helpers/no-addon.ts'],
        },
      },
      { extends: true, test: { name: 'native', include: ['tests/native/**/*.test.ts'] } },
      { extends: true, test: { name: 'e2e', include: ['tests/e2e/**/*.test.ts'] } },
    ],
  },
});
