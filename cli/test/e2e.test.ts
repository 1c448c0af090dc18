import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MemoryClient } from '../../client/src/index.js';
import { createTestApp, type TestApp } from '../../server/test/support/app.js';
import { describeDb } from '../../server/test/support/db.js';
import { buildClientAndCli, holdBuildLock } from '../../test/src/packages.js';

/**
 * The BUILT `mnemo` binary (cli/dist/index.js, resolving @mnemo/client from client/dist) against
 * a real listening server over PGlite. beforeAll runs both packages' builds, so a fresh checkout
 * needs nothing but `pnpm test`; the builds take a few seconds. The build lock keeps the package
 * test from rebuilding those files while this one runs them.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const bin = join(root, 'cli/dist/index.js');

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Spawns the binary asynchronously: the server answering it lives in this process. */
function mnemo(args: string[], env: Record<string, string>): Promise<Result> {
  return new Promise((resolveResult, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: mkdtempSync(join(tmpdir(), 'mnemo-home-')),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolveResult({ code: code ?? -1, stdout, stderr }));
  });
}

describeDb('mnemo (built binary) end to end', () => {
  let testApp: TestApp;
  let listener: Server;
  let env: Record<string, string>;
  let releaseBuild: (() => void) | undefined;

  beforeAll(async () => {
    releaseBuild = await holdBuildLock();
    await buildClientAndCli();
    testApp = await createTestApp();
    listener = await new Promise<Server>((ready) => {
      const server = testApp.app.listen(0, '127.0.0.1', () => ready(server));
    });
    const port = (listener.address() as AddressInfo).port;
    env = { MNEMO_BASE_URL: `http://127.0.0.1:${port}`, MNEMO_API_KEY: testApp.tenant.apiKey };
  }, 180_000);

  afterAll(async () => {
    releaseBuild?.();
    await new Promise<void>((done) => {
      listener?.closeAllConnections();
      listener?.close(() => done());
    });
    await testApp?.close();
  });

  it('health, add, search (MCP and REST), context, get, list, delete', async () => {
    expect(await mnemo(['health'], env)).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^status +ok/),
    });

    const added = await mnemo(
      [
        'add',
        'Ana is vegetarian and loves spicy food',
        '--owner-id',
        'ana',
        '--type',
        'preference',
        '--no-extract',
        '--json',
      ],
      env,
    );
    expect(added.code).toBe(0);
    const { memory_id } = JSON.parse(added.stdout) as { memory_id: string };

    const simple = await mnemo(['search', 'vegetarian', '--owner-id', 'ana', '--json'], env);
    const filtered = await mnemo(
      ['search', 'vegetarian', '--owner-id', 'ana', '--type', 'preference', '--json'],
      env,
    );
    for (const result of [simple, filtered]) {
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout).results[0].memory_id).toBe(memory_id);
    }
    const human = await mnemo(['search', 'vegetarian', '--owner-id', 'ana'], env);
    expect(human.stdout).toMatch(/#\s+SCORE\s+MEMORY\s+TEXT/);
    expect(human.stdout).toContain('Ana is vegetarian');

    const context = await mnemo(['context', 'What does Ana eat?', '--owner-id', 'ana'], env);
    expect(context.code).toBe(0);
    expect(context.stdout).toContain('vegetarian');
    expect(context.stdout).toContain(memory_id);

    expect((await mnemo(['get', memory_id], env)).stdout).toContain('Ana is vegetarian');
    expect(
      JSON.parse((await mnemo(['list', '--owner-id', 'ana', '--json'], env)).stdout).total,
    ).toBe(1);
    expect(await mnemo(['delete', memory_id], env)).toMatchObject({
      code: 0,
      stdout: `deleted ${memory_id}\n`,
    });

    const gone = await mnemo(['get', memory_id], env);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/^error NOT_FOUND: .*\(request_id [^)]+\)\n$/);
  });

  it('a wrong key is one error line and exit 1; a usage error exits 2', async () => {
    const bad = await mnemo(['list'], {
      ...env,
      MNEMO_API_KEY: 'mnemo_wrongwrongwrongwrongwrongwrong',
    });
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/^error UNAUTHORIZED: /);
    expect((await mnemo(['list', '--page', '0'], env)).code).toBe(2);
  });

  // Enough for 8 concurrent writers, 50 owners and a replayed re-run; more only adds minutes.
  const RECORDS = 300;
  it('imports 300 records; a re-run writes nothing new; bad records are reported', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-import-'));
    const file = join(dir, 'memories.jsonl');
    const colours = ['red', 'green', 'blue', 'amber', 'violet', 'teal', 'ochre', 'indigo'];
    const cities = [
      'Lisbon',
      'Osaka',
      'Quito',
      'Tallinn',
      'Nairobi',
      'Hobart',
      'Reno',
      'Bergen',
      'Cusco',
    ];
    const lines = Array.from({ length: RECORDS }, (_, i) =>
      JSON.stringify({
        text: `Customer c${i} ordered item ${i * 7919} in ${colours[i % colours.length]} and ships to ${cities[i % cities.length]} (ref ${i.toString(36)}x${(i * 31).toString(16)})`,
        user_id: `c${i % 50}`,
        memory_type: 'event',
        extract: false,
        metadata: { batch: 'import-e2e', n: i },
      }),
    );
    writeFileSync(file, `${lines.join('\n')}\n`);

    const first = await mnemo(['import', file, '--json', '--concurrency', '8'], env);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const summary = JSON.parse(first.stdout);
    expect(summary).toMatchObject({ total: RECORDS, failed: 0, failures: [] });
    expect(summary.imported + summary.deduped).toBe(RECORDS);

    // Counted in-process (50 owners): spawning 50 binaries twice would only slow the test down.
    const client = new MemoryClient({
      baseUrl: env.MNEMO_BASE_URL,
      apiKey: env.MNEMO_API_KEY,
      transport: 'rest',
    });
    const count = async () => {
      let total = 0;
      for (let owner = 0; owner < 50; owner++) {
        total += (await client.memories.list({ ownerId: `c${owner}`, page_size: 1 })).total;
      }
      return total;
    };
    const stored = await count();
    expect(stored).toBe(summary.imported);

    // Same file again: every record carries the same derived idempotency key, so the server
    // replays the first answers and stores nothing.
    const second = await mnemo(['import', file], env);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(
      new RegExp(`^imported \\d+, deduped \\d+, failed 0 \\(of ${RECORDS} in .*memories\\.jsonl`),
    );
    expect(await count()).toBe(stored);

    // Not a TTY: no progress bar, a plain summary with the reasons of failures, exit 1.
    const broken = join(dir, 'broken.jsonl');
    writeFileSync(
      broken,
      '{"text":"fine record for the summary test","extract":false}\nnot json\n{"text":""}\n{"text":"x","importance":500}\n',
    );
    const partial = await mnemo(['import', broken, '--owner-id', 'summary'], env);
    expect(partial.code).toBe(1);
    expect(partial.stderr).toBe('');
    expect(partial.stdout.split('\n').slice(0, 4)).toEqual([
      expect.stringMatching(/^imported 1, deduped 0, failed 3 \(of 4 in /),
      '  line 2: invalid JSON',
      '  line 3: missing "text"',
      expect.stringMatching(/^ {2}line 4: BAD_REQUEST: .*importance/),
    ]);
  }, 300_000);
});
