import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';

/**
 * The contract's barrel also exports the OpenAPI generator (and its CommonJS dependencies); the
 * client needs only the route table and the error statuses at run time, so the bundle reads
 * those two modules directly. Types still come from the whole contract.
 */
const contractRuntime = {
  name: 'mnemo-contract-runtime',
  setup(build: {
    onResolve: (options: { filter: RegExp }, callback: () => { path: string }) => void;
  }) {
    build.onResolve({ filter: /^@mnemo\/contract$/ }, () => ({
      path: fileURLToPath(new URL('./build/contract-runtime.ts', import.meta.url)),
    }));
  },
};

// ESM + CJS with types, for Node 18+, browsers and edge runtimes (fetch only, no node: imports).
// The workspace contract is bundled in (it is not published on its own); its runtime
// dependencies (@ts-rest/core, zod) and the MCP SDK stay external, as package dependencies.
export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  platform: 'neutral',
  target: 'es2022',
  // The contract's types are inlined into the declarations (it is not a package of its own), so a
  // customer's \`tsc\` sees real types; they refer only to zod and @ts-rest/core, dependencies here.
  // A path mapping (not a package lookup, which would mark a workspace symlink external) is what
  // makes the declaration bundler read the contract's source.
  dts: { compilerOptions: { paths: { '@mnemo/contract': ['../contract/src/index.ts'] } } },
  noExternal: ['@mnemo/contract'],
  external: ['@modelcontextprotocol/sdk', 'zod', '@ts-rest/core'],
  esbuildPlugins: [contractRuntime],
  esbuildOptions(options) {
    options.conditions = ['mnemo-source', 'import', 'module', 'default'];
  },
  clean: true,
  sourcemap: true,
  tsconfig: 'tsconfig.build.json',
});
