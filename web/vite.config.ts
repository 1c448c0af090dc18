import { defineConfig } from 'vite';

/**
 * The console is served by the server at /console. Workspace packages resolve to their source
 * (the `mnemo-source` condition), so building the console needs no other build first. Preact's
 * JSX runs through esbuild: no framework plugin is needed.
 */
export default defineConfig({
  base: '/console/',
  resolve: { conditions: ['mnemo-source', 'module', 'browser', 'development|production'] },
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', reportCompressedSize: false },
  logLevel: 'warn',
});
