import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  BASE_URL,
  envelope,
  health,
  memory as memoryFixture,
  searchResponse,
} from '../../client/test/fixtures.js';
import { effectiveRecord, importKey, parseImportFile } from '../src/commands/import.js';
import { run } from '../src/run.js';

// In-process runs against msw: option parsing, config precedence, output and errors. The built
// binary against a real server is in e2e.test.ts.
const memory = memoryFixture();

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const home = mkdtempSync(join(tmpdir(), 'mnemo-cli-home-'));

/** Runs the CLI in-process with a fixed environment and captures what it prints. */
async function cli(argv: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    stdout: { write: (chunk: string) => (stdout += chunk) },
    stderr: { write: (chunk: string) => (stderr += chunk) },
    env: { HOME: home, MNEMO_BASE_URL: BASE_URL, MNEMO_API_KEY: 'env-key', ...env },
  });
  return { code, stdout, stderr };
}

describe('health and configuration', () => {
  it('prints the health for humans', async () => {
    server.use(http.get(`${BASE_URL}/v1/health`, () => HttpResponse.json(health)));
    const { code, stdout, stderr } = await cli(['health']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toBe(
      ['status           ok', 'version          1.0.0', 'embedding_model  local/hash-256', ''].join(
        '\n',
      ),
    );
  });

  it('prints exactly the response as JSON with --json (before or after the command)', async () => {
    server.use(http.get(`${BASE_URL}/v1/health`, () => HttpResponse.json(health)));
    expect(JSON.parse((await cli(['--json', 'health'])).stdout)).toEqual(health);
    expect(JSON.parse((await cli(['health', '--json'])).stdout)).toEqual(health);
  });

  it('flags > environment > config file', async () => {
    const seen: Array<[string, string | null]> = [];
    for (const host of ['flag.test', 'env.test', 'file.test']) {
      server.use(
        http.get(`http://${host}/v1/health`, ({ request }) => {
          seen.push([host, request.headers.get('authorization')]);
          return HttpResponse.json(health);
        }),
      );
    }
    const config = join(home, 'config.json');
    writeFileSync(config, JSON.stringify({ baseUrl: 'http://file.test', apiKey: 'file-key' }));
    await cli(['health', '--base-url', 'http://flag.test', '--api-key', 'flag-key'], {
      MNEMO_CONFIG: config,
    });
    await cli(['health'], {
      MNEMO_CONFIG: config,
      MNEMO_BASE_URL: 'http://env.test',
      MNEMO_API_KEY: 'env-key',
    });
    await cli(['health'], { MNEMO_CONFIG: config, MNEMO_BASE_URL: '', MNEMO_API_KEY: '' });
    expect(seen).toEqual([
      ['flag.test', 'Bearer flag-key'],
      ['env.test', 'Bearer env-key'],
      ['file.test', 'Bearer file-key'],
    ]);
  });

  it('reads ~/.config/mnemo/config.json by default', async () => {
    const xdg = mkdtempSync(join(tmpdir(), 'mnemo-xdg-'));
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(xdg, 'mnemo'));
    writeFileSync(
      join(xdg, 'mnemo', 'config.json'),
      JSON.stringify({ baseUrl: 'http://xdg.test' }),
    );
    server.use(http.get('http://xdg.test/v1/health', () => HttpResponse.json(health)));
    const { code } = await cli(['health'], { XDG_CONFIG_HOME: xdg, MNEMO_BASE_URL: '' });
    expect(code).toBe(0);
  });

  it('a broken config file is one error line', async () => {
    const config = join(home, 'broken.json');
    writeFileSync(config, '{"baseUrl": 42}');
    const { code, stderr } = await cli(['health', '--config', config]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error: config file .*broken\.json: baseUrl: Expected string/);
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('memory commands', () => {
  it('add sends the payload with the owner and an idempotency key', async () => {
    let body: Record<string, unknown> = {};
    server.use(
      http.post(`${BASE_URL}/v1/memories`, async ({ request }) => {
        body = (await request.json()) as Record<string, unknown>;
        return HttpResponse.json({
          memory_id: 'm1',
          stored: true,
          extraction: { status: 'skipped' },
          chunks: 1,
        });
      }),
    );
    const { code, stdout } = await cli([
      'add',
      'Prefers window seats',
      '--owner-id',
      'u_42',
      '--owner-type',
      'agent',
      '--type',
      'preference',
      '--metadata',
      '{"src":"cli"}',
      '--no-extract',
    ]);
    expect(code).toBe(0);
    expect(body).toMatchObject({
      text: 'Prefers window seats',
      owner_id: 'u_42',
      owner_type: 'app',
      memory_type: 'preference',
      metadata: { src: 'cli' },
      extract: false,
    });
    expect(body.idempotency_key).toEqual(expect.any(String));
    expect(stdout).toMatch(/^stored m1\nchunks +1/);
  });

  it('search prints a table with the request id; filters go over REST', async () => {
    let body: unknown;
    server.use(
      http.post(`${BASE_URL}/v1/search`, async ({ request }) => {
        body = await request.json();
        return HttpResponse.json(searchResponse, { headers: { 'x-request-id': 'req-1' } });
      }),
    );
    const { code, stdout } = await cli([
      'search',
      'window',
      '--owner-id',
      'u_42',
      '--type',
      'fact',
      '--top-k',
      '3',
    ]);
    expect(code).toBe(0);
    expect(body).toEqual({
      query: 'window',
      owner_id: 'u_42',
      top_k: 3,
      filters: { memory_type: 'fact' },
    });
    expect(stdout).toContain('#  SCORE  MEMORY');
    expect(stdout).toContain('0.910');
    expect(stdout).toContain('request_id req-1');
  });

  it('list --json passes the filters and prints the page', async () => {
    let query: Record<string, string> = {};
    const page = { results: [memory], page: 2, page_size: 1, total: 3, has_more: true };
    server.use(
      http.get(`${BASE_URL}/v1/memories`, ({ request }) => {
        query = Object.fromEntries(new URL(request.url).searchParams);
        return HttpResponse.json(page);
      }),
    );
    const { code, stdout } = await cli([
      'list',
      '--json',
      '--user-id',
      'u_42',
      '--page',
      '2',
      '--page-size',
      '1',
    ]);
    expect(code).toBe(0);
    expect(query).toEqual({ owner_id: 'u_42', page: '2', page_size: '1' });
    expect(JSON.parse(stdout)).toEqual(page);
    const human = await cli(['list']);
    expect(human.stdout).toContain('page 2 (1 per page), 3 in total; next: --page 3');
  });

  it('get and delete hit the memory by id', async () => {
    server.use(
      http.get(`${BASE_URL}/v1/memories/:id`, () => HttpResponse.json(memory)),
      http.delete(`${BASE_URL}/v1/memories/:id`, ({ params }) =>
        HttpResponse.json({ id: params.id, deleted: true }),
      ),
    );
    expect((await cli(['get', memory.id])).stdout).toContain(memory.text);
    expect((await cli(['delete', memory.id])).stdout).toBe(`deleted ${memory.id}\n`);
  });

  it('feedback sends the request id', async () => {
    server.use(
      http.post(`${BASE_URL}/v1/feedback`, async ({ request }) => {
        const body = (await request.json()) as { request_id: string; feedback: string };
        return HttpResponse.json({ ...body, applied: 2 });
      }),
    );
    const { stdout } = await cli(['feedback', 'req-1', 'positive']);
    expect(stdout).toBe('recorded positive feedback on req-1: applied to 2 memories\n');
  });
});

describe('errors and usage', () => {
  it('with no API key anywhere, says how to set one and sends no request', async () => {
    let requests = 0;
    server.use(
      http.all(`${BASE_URL}/*`, () => {
        requests++;
        return HttpResponse.json({ results: [] });
      }),
    );
    const empty = mkdtempSync(join(tmpdir(), 'mnemo-cli-nokey-'));
    const { code, stdout, stderr } = await cli(['search', 'seat'], {
      HOME: empty,
      MNEMO_API_KEY: '',
    });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      `error: no API key: set MNEMO_API_KEY or pass --api-key (or put apiKey in ${join(empty, '.config', 'mnemo', 'config.json')})\n`,
    );
    expect(requests).toBe(0);
    // health is public: it runs without a key.
    server.use(http.get(`${BASE_URL}/v1/health`, () => HttpResponse.json(health)));
    expect((await cli(['health'], { HOME: empty, MNEMO_API_KEY: '' })).code).toBe(0);
  });

  it('a 401 prints one friendly line and exits 1', async () => {
    server.use(
      http.get(`${BASE_URL}/v1/memories`, () =>
        HttpResponse.json(envelope('UNAUTHORIZED', 'Invalid API key', 'req_1'), { status: 401 }),
      ),
    );
    const { code, stdout, stderr } = await cli(['list']);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe('error UNAUTHORIZED: Invalid API key (request_id req_1)\n');
  });

  it('a 401 with --json prints the error as JSON on stderr', async () => {
    server.use(
      http.get(`${BASE_URL}/v1/memories`, () =>
        HttpResponse.json(envelope('UNAUTHORIZED', 'Invalid API key', 'req_1'), { status: 401 }),
      ),
    );
    const { code, stderr } = await cli(['list', '--json']);
    expect(code).toBe(1);
    expect(JSON.parse(stderr)).toMatchObject({
      error: { code: 'UNAUTHORIZED', status: 401 },
      request_id: 'req_1',
    });
  });

  it('usage: the route is not served yet, so it is a 404 line', async () => {
    server.use(
      http.get(`${BASE_URL}/v1/usage/today`, () =>
        HttpResponse.json(envelope('NOT_FOUND', 'No route'), { status: 404 }),
      ),
    );
    const { code, stderr } = await cli(['usage']);
    expect(code).toBe(1);
    expect(stderr).toBe('error NOT_FOUND: No route (request_id req_123)\n');
  });

  it('usage renders the spec response when a server sends one', async () => {
    server.use(
      http.get(`${BASE_URL}/v1/usage/today`, () =>
        HttpResponse.json({
          plan: 'build',
          writes: 3,
          reads: 10,
          embeds: 4,
          limits: { writes: 1200, reads: 4000, embeds: 600000 },
        }),
      ),
    );
    const { stdout } = await cli(['usage']);
    expect(stdout).toContain('writes    3     1200');
  });

  it('INVALID_OWNER_ID before any request', async () => {
    const { code, stderr } = await cli(['list', '--owner-id', 'a', '--user-id', 'b']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error INVALID_OWNER_ID: Owner ids disagree/);
  });

  it('bad arguments are usage errors (exit 2) without calling the service', async () => {
    expect(await cli(['list', '--page', 'two'])).toMatchObject({ code: 2 });
    expect((await cli(['list', '--page', 'two'])).stderr).toMatch(
      /option '--page <n>' argument 'two' is invalid/,
    );
    expect(await cli(['get'])).toMatchObject({
      code: 2,
      stderr: "error: missing required argument 'id'\n",
    });
    expect((await cli(['frobnicate'])).code).toBe(2);
    expect((await cli(['search', 'x', '--mode', 'fuzzy'])).code).toBe(2);
  });

  it('--help prints the usage on stdout and exits 0', async () => {
    const { code, stdout } = await cli(['--help']);
    expect(code).toBe(0);
    for (const name of [
      'add',
      'search',
      'context',
      'get',
      'list',
      'delete',
      'feedback',
      'usage',
      'health',
      'import',
    ]) {
      expect(stdout).toMatch(new RegExp(`\\n  ${name} `));
    }
  });
});

describe('import helpers', () => {
  it('reads JSONL with line numbers and JSON arrays with record numbers', () => {
    expect(parseImportFile('{"text":"a"}\n\nnot json\n{"x":1}\n')).toEqual([
      { at: 'line 1', record: { text: 'a' } },
      { at: 'line 3', error: 'invalid JSON' },
      { at: 'line 4', error: 'missing "text"' },
    ]);
    expect(parseImportFile(' [{"text":"a"}, 3]')).toEqual([
      { at: 'record 1', record: { text: 'a' } },
      { at: 'record 2', error: 'not a JSON object' },
    ]);
  });

  it('derives a stable key from the record, key order aside, unless it has its own', () => {
    const a = importKey({ text: 'x', metadata: { a: 1, b: 2 } });
    expect(importKey({ metadata: { b: 2, a: 1 }, text: 'x' })).toBe(a);
    expect(importKey({ text: 'y' })).not.toBe(a);
    expect(a).toMatch(/^import-[0-9a-f]{48}$/);
    expect(importKey({ text: 'x', idempotency_key: 'mine-0001' })).toBe('mine-0001');
  });

  it('command-line owner defaults apply only to records without an owner', () => {
    expect(effectiveRecord({ text: 'x' }, { ownerId: 'd' })).toEqual({ text: 'x', ownerId: 'd' });
    expect(effectiveRecord({ text: 'x', user_id: 'u' }, { ownerId: 'd' })).toEqual({
      text: 'x',
      user_id: 'u',
    });
  });
});

describe('import (in-process)', () => {
  it('draws a progress bar on a TTY and prints the plain summary on stdout', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-cli-import-'));
    const file = join(dir, 'm.json');
    writeFileSync(file, JSON.stringify([{ text: 'one' }, { text: 'two' }, { text: 'three' }]));
    const keys: unknown[] = [];
    server.use(
      http.post(`${BASE_URL}/v1/memories`, async ({ request }) => {
        const body = (await request.json()) as { text: string; idempotency_key: string };
        keys.push(body.idempotency_key);
        return HttpResponse.json({
          memory_id: body.text,
          stored: true,
          extraction: { status: 'skipped' },
          ...(body.text === 'two' ? { deduped: true, dedupe_kind: 'near' } : {}),
        });
      }),
    );
    let stdout = '';
    let stderr = '';
    const code = await run(['import', file, '--owner-id', 'u1'], {
      stdout: { write: (chunk: string) => (stdout += chunk) },
      stderr: { write: (chunk: string) => (stderr += chunk) },
      env: { HOME: home, MNEMO_BASE_URL: BASE_URL, MNEMO_API_KEY: 'k' },
      isTTY: true,
    });
    expect(code).toBe(0);
    expect(stderr).toMatch(/\r\[#{30}\] 3\/3 {2}imported 2 {2}deduped 1 {2}failed 0\n$/);
    expect(stdout).toMatch(/^imported 2, deduped 1, failed 0 \(of 3 in .*m\.json, [\d.]+ s\)\n$/);
    expect(new Set(keys).size).toBe(3);
    expect(keys.every((key) => typeof key === 'string' && key.startsWith('import-'))).toBe(true);
  });
});
