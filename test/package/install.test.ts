import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createRequire, isBuiltin } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../server/test/support/app.js';
import { ROOT, buildClientAndCli, holdBuildLock, pnpm } from '../src/packages.js';

/**
 * The packages as a customer gets them: @mnemo/client and @mnemo/cli packed by pnpm (which
 * applies publishConfig and rewrites `workspace:*`), installed by npm into an app in the OS temp
 * folder, outside the workspace, then type-checked, run as ESM and CommonJS against a live
 * server, bundled for the browser, and the `mnemo` bin run from the install. Once per CI run: it
 * is in the pglite project only, and the database does not matter to it.
 */

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function exec(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<Run> {
  return new Promise((resolveRun) => {
    execFile(
      command,
      args,
      { cwd, env: { ...process.env, ...env }, maxBuffer: 16 << 20 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolveRun({ code, stdout, stderr });
      },
    );
  });
}

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** A customer's strict settings: NodeNext resolution, the d.ts checked too (no skipLibCheck). */
const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2022', 'DOM'],
    types: [],
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    skipLibCheck: false,
    noEmit: true,
  },
};

/** `true` only when T is `any`: the types must not silently collapse to it. */
const IS_ANY = 'type IsAny<T> = 0 extends 1 & T ? true : false;';

const TYPED_ESM = `import {
  MemoryClient,
  MnemoError,
  RateLimitError,
  type Memory,
  type SearchResponse,
  type SearchResultItem,
} from '@mnemo/client';
${IS_ANY}

const client = new MemoryClient({ baseUrl: 'http://127.0.0.1:8787', apiKey: 'k', transport: 'rest' });
export async function use(): Promise<string[]> {
  const added = await client.memories.add({ text: 'Prefers window seats', ownerId: 'u_42' });
  const id: string = added.memory_id;
  const memory: Memory = await client.memories.get(id);
  const response: SearchResponse = await client.search.query({ query: 'seat', ownerId: 'u_42', top_k: 3 });
  const first: SearchResultItem | undefined = response.results[0];
  const score: number | undefined = first?.score;
  const notAny: [IsAny<Memory>, IsAny<SearchResultItem>, IsAny<typeof response.results>] = [false, false, false];
  void notAny;
  try {
    await client.context.get({ query: 'travel', ownerId: 'u_42' });
  } catch (error) {
    if (error instanceof RateLimitError) {
      const wait: number | undefined = error.retryAfterMs;
      void wait;
    } else if (error instanceof MnemoError) {
      const code: string = error.code;
      void code;
    }
  }
  return [memory.text, String(score)];
}
`;

const TYPED_CJS = `import { MemoryClient, type Memory } from '@mnemo/client';
${IS_ANY}
const notAny: IsAny<Memory> = false;
void notAny;
export const client = new MemoryClient({ transport: 'rest' });
export async function texts(ownerId: string): Promise<string[]> {
  const page = await client.memories.list({ ownerId });
  return page.results.map((memory: Memory) => memory.text);
}
`;

/** Each line holds one deliberate mistake; the test expects exactly these diagnostics. */
const BROKEN = [
  `import { MemoryClient } from '@mnemo/client';`,
  `const client = new MemoryClient({ transport: 'grpc' });`,
  `await client.memories.add({ text: 42 });`,
  `const { results } = await client.search.query({ query: 'q' });`,
  `console.log(results[0]?.no_such_field);`,
  `await client.memories.add({ text: 'x', memory_type: 'gossip' });`,
].join('\n');
const EXPECTED_ERRORS = [
  { line: 2, code: 'TS2322' },
  { line: 3, code: 'TS2322' },
  { line: 5, code: 'TS2339' },
  { line: 6, code: 'TS2322' },
];

/** What the ESM and CommonJS scripts do with the installed client against the live server. */
const scriptBody = (owner: string) => `
  const client = new MemoryClient();
  const added = await client.memories.add({
    text: 'Ana is vegetarian and loves spicy food',
    ownerId: '${owner}',
    extract: false,
  });
  const found = await client.search.query({ query: 'vegetarian', ownerId: '${owner}' });
  let mcp;
  try {
    await new MemoryClient({ transport: 'mcp' }).search.query({ query: 'x' });
  } catch (error) {
    mcp = { code: error.code, isMnemoError: error instanceof MnemoError };
  }
  await client.close();
  console.log(JSON.stringify({
    stored: added.stored,
    found: found.results.some((hit) => hit.memory_id === added.memory_id),
    servedBy: client.lastSearchTransport,
    mcp,
  }));
`;
const ESM_SCRIPT = `import { MemoryClient, MnemoError } from '@mnemo/client';\n${scriptBody('esm')}`;
const CJS_SCRIPT = `const { MemoryClient, MnemoError } = require('@mnemo/client');
(async () => {${scriptBody('cjs')}})().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
`;

/** Diagnostics as `{ line, code }` from tsc's `file(line,col): error TSxxxx: ...` lines. */
function diagnostics(output: string, file: string) {
  return [...output.matchAll(/^(.+?)\((\d+),\d+\): error (TS\d+):/gm)]
    .filter((match) => match[1] === file)
    .map((match) => ({ line: Number(match[2]), code: match[3] }));
}

describe('the packed packages, installed by npm outside the workspace', () => {
  let app: string;
  let testApp: TestApp;
  let listener: Server;
  let env: Record<string, string>;

  beforeAll(async () => {
    const packs = mkdtempSync(join(tmpdir(), 'mnemo-packs-'));
    const release = await holdBuildLock();
    try {
      await buildClientAndCli();
      await pnpm(['pack', '--pack-destination', packs], join(ROOT, 'client'));
      await pnpm(['pack', '--pack-destination', packs], join(ROOT, 'cli'));
    } finally {
      release();
    }
    app = mkdtempSync(join(tmpdir(), 'mnemo-app-'));
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'customer-app', version: '1.0.0', private: true }),
    );
    const tarballs = readdirSync(packs).map((name) => join(packs, name));
    const install = await exec(
      npm,
      ['install', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs],
      app,
    );
    expect(install.stderr).toBe('');
    expect(install.code).toBe(0);

    testApp = await createTestApp();
    listener = await new Promise<Server>((ready) => {
      const server = testApp.app.listen(0, '127.0.0.1', () => ready(server));
    });
    const port = (listener.address() as AddressInfo).port;
    env = { MNEMO_BASE_URL: `http://127.0.0.1:${port}`, MNEMO_API_KEY: testApp.tenant.apiKey };
    // Generous: it may first wait for the CLI's end-to-end file, which holds the build lock.
  }, 600_000);

  afterAll(async () => {
    await new Promise<void>((done) => {
      listener?.closeAllConnections();
      listener?.close(() => done());
    });
    await testApp?.close();
    if (app) rmSync(app, { recursive: true, force: true });
  });

  it('installs only the client and the CLI with their small dependencies (no MCP SDK, no web framework)', () => {
    const modules = join(app, 'node_modules');
    const names = readdirSync(modules)
      .filter((name) => !name.startsWith('.'))
      .flatMap((name) =>
        name.startsWith('@')
          ? readdirSync(join(modules, name)).map((inner) => `${name}/${inner}`)
          : [name],
      )
      .sort();
    expect(names).toEqual(['@mnemo/cli', '@mnemo/client', '@ts-rest/core', 'commander', 'zod']);
    const manifest = JSON.parse(
      readFileSync(join(modules, '@mnemo/client/package.json'), 'utf8'),
    ) as { exports: Record<string, unknown> };
    expect(JSON.stringify(manifest.exports)).not.toContain('mnemo-source');
    const readme = readFileSync(join(modules, '@mnemo/client/README.md'), 'utf8');
    expect(readme).not.toMatch(/\]\(\.\.\//);
  });

  it('a strict NodeNext project type-checks against it, as ESM and as CommonJS', async () => {
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({ ...TSCONFIG, files: ['typed.mts', 'typed.cts'] }),
    );
    writeFileSync(join(app, 'typed.mts'), TYPED_ESM);
    writeFileSync(join(app, 'typed.cts'), TYPED_CJS);
    const result = await exec(process.execPath, [tsc, '-p', 'tsconfig.json'], app);
    expect(result.stdout + result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  it('deliberate type errors fail with the expected diagnostics (the types are not any)', async () => {
    writeFileSync(
      join(app, 'tsconfig.broken.json'),
      JSON.stringify({ ...TSCONFIG, files: ['broken.mts'] }),
    );
    writeFileSync(join(app, 'broken.mts'), BROKEN);
    const result = await exec(process.execPath, [tsc, '-p', 'tsconfig.broken.json'], app);
    expect(result.code).not.toBe(0);
    expect(diagnostics(result.stdout, 'broken.mts')).toEqual(EXPECTED_ERRORS);
  });

  it.each([
    ['ESM', 'search.mjs', ESM_SCRIPT],
    ['CommonJS', 'search.cjs', CJS_SCRIPT],
  ])(
    'the %s script writes and searches on the live server; hybrid serves over REST without the MCP SDK',
    async (_kind, file, source) => {
      writeFileSync(join(app, file), source);
      const result = await exec(process.execPath, [file], app, env);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({
        stored: true,
        found: true,
        servedBy: 'rest',
        mcp: { code: 'MCP_SDK_MISSING', isMnemoError: true },
      });
    },
  );

  it('bundles for the browser with esbuild, importing no Node built-in', async () => {
    writeFileSync(
      join(app, 'browser.mjs'),
      `import { MemoryClient } from '@mnemo/client';\n` +
        `export const client = new MemoryClient({ baseUrl: 'https://mnemo.example', apiKey: 'k' });\n`,
    );
    const result = await build({
      absWorkingDir: app,
      entryPoints: ['browser.mjs'],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    expect(result.errors).toEqual([]);
    const imports = Object.values(result.metafile.inputs).flatMap((input) =>
      input.imports.map((imported) => imported.path),
    );
    expect(imports.filter((path) => isBuiltin(path))).toEqual([]);
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((path) => path.includes('node_modules/@mnemo/client/dist/index.js'))).toBe(
      true,
    );
    expect(inputs.filter((path) => path.includes('@modelcontextprotocol'))).toEqual([]);
  });

  it('the mnemo bin from the install runs against the live server, and asks for a key when none is set', async () => {
    const bin = join(app, 'node_modules', '.bin', 'mnemo');
    const home = mkdtempSync(join(tmpdir(), 'mnemo-home-'));
    const cliEnv = { ...env, HOME: home, XDG_CONFIG_HOME: join(home, '.config') };
    const added = await exec(
      bin,
      ['add', 'Bo plays the cello on Sundays', '--owner-id', 'bo', '--json'],
      app,
      cliEnv,
    );
    expect(added).toMatchObject({ code: 0, stderr: '' });
    const { memory_id: id } = JSON.parse(added.stdout) as { memory_id: string };
    const search = await exec(bin, ['search', 'cello', '--owner-id', 'bo', '--json'], app, cliEnv);
    expect(search).toMatchObject({ code: 0, stderr: '' });
    const results = (JSON.parse(search.stdout) as { results: Array<{ memory_id: string }> })
      .results;
    expect(results.map((hit) => hit.memory_id)).toContain(id);

    const noKey = await exec(bin, ['search', 'cello'], app, { ...cliEnv, MNEMO_API_KEY: '' });
    expect(noKey.code).not.toBe(0);
    expect(noKey.stderr).toMatch(/^error: no API key: set MNEMO_API_KEY or pass --api-key/);
  });
});
