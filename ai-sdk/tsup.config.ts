import { defineConfig } from 'tsup';

// ESM + CJS with types, like @mnemo/client (fetch only, no node: imports). The client, `ai` and
// `zod` stay external: the client is a dependency, `ai` and `zod` are the app's own (peers), so
// the tools and the middleware use the app's copies. The client is resolved from its build
// (`pnpm --filter @mnemo/client build` first).
export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  platform: 'neutral',
  target: 'es2022',
  dts: true,
  external: ['@mnemo/client', 'ai', 'zod'],
  clean: true,
  sourcemap: true,
  tsconfig: 'tsconfig.build.json',
});
