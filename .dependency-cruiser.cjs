/**
 * The import layers of STYLE.md, checked by `pnpm lint`:
 *   node .dependency-cruiser.cjs server/src contract/src client/src ai-sdk/src cli/src web/src bench
 * Data flows one way (contract → server routes → services → db queries; contract → client →
 * CLI) and nothing imports "upwards". Type-only imports count: a type pulled from a higher layer
 * ties the lower one to it as surely as a value does.
 *
 * Run directly, this file runs the check itself (see the end): the `depcruise` command of
 * dependency-cruiser 18 refuses Node 20 (its engines say ^22), which this repository runs on,
 * while its programmatic API works there. On Node 22 and later the usual
 * `npx depcruise --config .dependency-cruiser.cjs <folders>` reads the same rules.
 */

/** Server modules below the request layer: the logic, the storage, the leaves and their errors. */
const SERVER_LOWER =
  '^server/src/(?:services|db|providers|text|limits)/|^server/src/(?:errors|ids|config|logger)\\.ts$';
/** Server modules that wire requests, processes and jobs together on top of the services. */
const SERVER_UPPER =
  '^server/src/(?:operations|http|routes|mcp|jobs|commands|types)/|^server/src/(?:app|deps|main|startup-errors|unhandled-rejections)\\.ts$';
/** The leaves every server module may use: settings, logging, ids, errors and limit counters. */
const SERVER_LEAVES = '^server/src/(?:limits/|(?:errors|ids|config|logger)\\.ts$)';
/** The composition root: it builds every port and nobody imports it back. */
const COMPOSITION_ROOT = '^server/src/(?:app|deps|main)\\.ts$';

/** A workspace package, by folder or (unresolved or not) by package name. */
const pkg = (name) => `^(?:${name}/|(?:node_modules/)?@mnemo/${name}(?:/|$))`;

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Modules that import each other (directly or round a loop) cannot be layered.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'server-lower-not-to-upper',
      comment:
        'services, db, providers, text and errors.ts sit below http, routes, mcp, jobs, commands, ' +
        'app.ts, deps.ts and main.ts: both REST and MCP call them, so they must not know either.',
      severity: 'error',
      from: { path: SERVER_LOWER },
      to: { path: SERVER_UPPER },
    },
    {
      name: 'db-not-to-services',
      comment: 'db/ (client, schema, queries) is called by services, never the other way round.',
      severity: 'error',
      from: { path: '^server/src/db/' },
      to: { path: '^server/src/services/' },
    },
    {
      name: 'providers-text-are-leaves',
      comment: 'providers/ and text/ are leaves the services use: they know no service or query.',
      severity: 'error',
      from: { path: '^server/src/(?:providers|text)/' },
      to: { path: '^server/src/(?:services|db)/' },
    },
    {
      name: 'http-not-to-upper',
      comment:
        'http/ holds the cross-cutting middleware that app.ts, routes and MCP use; it knows none of them.',
      severity: 'error',
      from: { path: '^server/src/http/' },
      to: { path: '^server/src/(?:routes|mcp|jobs|commands)/|^server/src/(?:app|main)\\.ts$' },
    },
    {
      name: 'routes-mcp-not-to-app',
      comment:
        'Routes and MCP tools are mounted by app.ts (started by main.ts); they must not import it.',
      severity: 'error',
      from: { path: '^server/src/(?:routes|mcp)/' },
      to: { path: '^server/src/(?:app|main)\\.ts$' },
    },
    {
      name: 'server-leaves-are-leaves',
      comment:
        'limits/, config.ts, logger.ts, ids.ts and errors.ts sit at the bottom of the server: ' +
        'they know no service, query, provider, operation or door.',
      severity: 'error',
      from: { path: SERVER_LEAVES },
      to: { path: '^server/src/', pathNot: SERVER_LEAVES },
    },
    {
      name: 'doors-not-to-composition-root',
      comment:
        'Routes and MCP tools are handed the narrow ports they use (the operations, above all) ' +
        'by app.ts; they never reach for deps.ts, app.ts or main.ts.',
      severity: 'error',
      from: { path: '^server/src/(?:routes|mcp)/' },
      to: { path: COMPOSITION_ROOT },
    },
    {
      name: 'operations-below-doors',
      comment:
        'operations/ is called by both doors through one policy wrapper: it knows neither door, ' +
        'no HTTP middleware and no job.',
      severity: 'error',
      from: { path: '^server/src/operations/' },
      to: {
        path: '^server/src/(?:http|routes|mcp|jobs|commands)/|^server/src/(?:app|deps|main)\\.ts$',
      },
    },
    {
      name: 'http-not-to-queries',
      comment:
        'http/ middleware reaches data through services (or ports handed to it), never a query.',
      severity: 'error',
      from: { path: '^server/src/http/' },
      to: { path: '^server/src/db/(?:queries|schema)/' },
    },
    {
      name: 'doors-not-to-queries',
      comment: 'Routes and MCP tools decode, call an operation or a service, and encode.',
      severity: 'error',
      from: { path: '^server/src/(?:routes|mcp)/' },
      to: { path: '^server/src/db/(?:queries|schema)/' },
    },
    {
      name: 'routes-through-operations',
      comment:
        'A REST handler decodes, calls an operation and encodes: it reaches no service, query, ' +
        'provider or job (what HTTP itself needs, such as the session check, comes from http/).',
      severity: 'error',
      from: { path: '^server/src/routes/' },
      to: { path: '^server/src/(?:services|db|providers|text|jobs)/' },
    },
    {
      name: 'server-files-in-a-layer',
      comment:
        'Every server module belongs to the lower or the upper floor (a new folder or top-level ' +
        'file is placed in one of them above, so the floor rules apply to it).',
      severity: 'error',
      from: {},
      to: { path: '^server/src/', pathNot: [SERVER_LOWER, SERVER_UPPER] },
    },
    {
      name: 'sources-not-to-tests',
      comment: 'What ships never imports a test or its support.',
      severity: 'error',
      from: { path: '^(?:server|contract|client|ai-sdk|cli|web)/src/' },
      to: { path: '^test/|^(?:server|contract|client|ai-sdk|cli|web)/test/' },
    },
    {
      name: 'web-through-client',
      comment: 'The console speaks to the server through the client library and the contract only.',
      severity: 'error',
      from: { path: '^web/' },
      to: { path: [pkg('server'), pkg('cli'), '^bench/', '^test/'] },
    },
    {
      name: 'nothing-imports-bench',
      comment: 'bench/ sits on top of everything and is never part of what ships or is tested.',
      severity: 'error',
      from: { pathNot: '^bench/' },
      to: { path: '^bench/' },
    },
    {
      name: 'contract-not-to-packages',
      comment: 'The contract is the bottom of every package: it imports none of them.',
      severity: 'error',
      from: { path: '^contract/' },
      to: { path: [pkg('server'), pkg('client'), pkg('cli'), pkg('ai-sdk')] },
    },
    {
      name: 'client-not-to-server-cli',
      comment:
        'The client speaks to the server through the contract only; the CLI and the AI SDK ' +
        'package are built on it.',
      severity: 'error',
      from: { path: '^client/' },
      to: { path: [pkg('server'), pkg('cli'), pkg('ai-sdk')] },
    },
    {
      name: 'cli-not-to-server',
      comment: 'The CLI reaches the server through the client library only.',
      severity: 'error',
      from: { path: '^cli/' },
      to: { path: pkg('server') },
    },
    {
      name: 'ai-sdk-through-client',
      comment:
        'The AI SDK package reaches the server through the client library only (the contract ' +
        'types too: the client re-exports the ones it needs, so customers install one package).',
      severity: 'error',
      from: { path: '^ai-sdk/' },
      to: { path: [pkg('server'), pkg('cli'), pkg('contract')] },
    },
  ],
  options: {
    // `import type` and type-only re-exports count as imports.
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    // Workspace packages resolve (through their symlinks) to their TypeScript source, as
    // TypeScript and vitest resolve them.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['mnemo-source', 'import', 'types', 'node', 'default'],
      mainFields: ['module', 'main', 'types'],
    },
  },
};

if (require.main === module) {
  (async () => {
    const { cruise } = await import('dependency-cruiser');
    const { default: extractDepcruiseOptions } =
      await import('dependency-cruiser/config-utl/extract-depcruise-options');
    const folders = process.argv.slice(2);
    const options = await extractDepcruiseOptions(__filename);
    const { output, exitCode } = await cruise(folders, { ...options, outputType: 'err' });
    process.stdout.write(output);
    // As `depcruise`: the number of errors found, 0 when the layers hold.
    process.exitCode = exitCode;
  })().catch((error) => {
    process.stderr.write(`dependency check failed to run: ${error?.stack ?? error}\n`);
    process.exitCode = 1;
  });
}
