import { defineConfig } from 'tsup';

// One ESM file with its shebang; @mnemo/client and the other dependencies stay external (the
// client is resolved from its own build: `pnpm --filter @mnemo/client build` first).
export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  clean: true,
  sourcemap: true,
  tsconfig: 'tsconfig.build.json',
});
