import { defineConfig } from 'vitest/config';

/**
 * Workspace packages export their TypeScript source under this condition, so tests run against
 * source without a build. Node tests resolve through Vite's server (SSR) environment, which reads
 * `ssr.resolve.conditions` (checked: `resolve.conditions` alone does NOT reach them); browser-like
 * environments (jsdom) read `resolve.conditions`. Both lists replace Vite's defaults, which are
 * therefore repeated (Vite's `defaultServerConditions` / `defaultClientConditions`; `vite` itself
 * is not a root dependency to import them from).
 */
const SOURCE_CONDITION = 'mnemo-source';
const resolveSource = {
  resolve: { conditions: [SOURCE_CONDITION, 'module', 'browser', 'development|production'] },
  ssr: { resolve: { conditions: [SOURCE_CONDITION, 'module', 'node', 'development|production'] } },
};

// PGlite boots a WASM Postgres per test database (from a migrated dump): seconds, not millis.
const timeouts = { testTimeout: 30_000, hookTimeout: 30_000 };

export default defineConfig({
  test: {
    projects: [
      {
        ...resolveSource,
        test: {
          name: 'pglite',
          include: [
            'contract/test/**/*.test.ts',
            'server/test/**/*.test.ts',
            'client/test/**/*.test.ts',
            'ai-sdk/test/**/*.test.ts',
            'cli/test/**/*.test.ts',
            'test/contract/**/*.test.ts',
            // Packs and installs the published packages: once per run, so in this project only.
            'test/package/**/*.test.ts',
          ],
          exclude: ['**/node_modules/**', 'server/test/cluster/**'],
          env: { MNEMO_TEST_DB: 'pglite' },
          globalSetup: ['server/test/support/pglite-global-setup.ts'],
          sequence: { groupOrder: 0 },
          ...timeouts,
        },
      },
      {
        ...resolveSource,
        test: {
          name: 'postgres',
          include: ['server/test/**/*.test.ts', 'test/contract/**/*.test.ts'],
          exclude: ['**/node_modules/**', 'server/test/cluster/**'],
          env: { MNEMO_TEST_DB: 'postgres' },
          globalSetup: ['server/test/support/postgres-global-setup.ts'],
          sequence: { groupOrder: 0 },
          ...timeouts,
        },
      },
      {
        ...resolveSource,
        test: {
          // Real multi-process clusters (scripts/cluster.ts): PostgreSQL primary and replica,
          // Redis with Sentinel, several instances behind a load balancer. Run on its own.
          name: 'cluster',
          include: ['server/test/cluster/**/*.test.ts'],
          // One cluster at a time: each file starts its own, and the machine runs only one well.
          fileParallelism: false,
          // After the two store projects, alone: its time bounds (revocation, leases) are real.
          sequence: { groupOrder: 1 },
          testTimeout: 120_000,
          hookTimeout: 240_000,
        },
      },
    ],
  },
});
