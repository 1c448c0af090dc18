import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BASE_URL, health, memory as memoryFixture } from '../../client/test/fixtures.js';
import { run } from '../src/run.js';

// The client's fixtures: the CLI prints what the client returns.
const memory = memoryFixture();

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

/** Runs the CLI in-process with a fixed environment and captures what it prints. */
async function cli(argv: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    stdout: { write: (chunk: string) => (stdout += chunk) },
    stderr: { write: (chunk: string) => (stderr += chunk) },
    env: { MNEMO_BASE_URL: BASE_URL, MNEMO_API_KEY: 'env-key', ...env },
  });
  return { code, stdout, stderr };
}

describe('mnemo health', () => {
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

  it('prints exactly the response as JSON with --json', async () => {
    server.use(http.get(`${BASE_URL}/v1/health`, () => HttpResponse.json(health)));
    const { code, stdout } = await cli(['--json', 'health']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual(health);
  });

  it('--base-url and --api-key override the environment', async () => {
    let authorization: string | null = null;
    server.use(
      http.get('http://other.test/v1/health', ({ request }) => {
        authorization = request.headers.get('authorization');
        return HttpResponse.json(health);
      }),
    );
    const { code } = await cli([
      'health',
      '--base-url',
      'http://other.test/',
      '--api-key',
      'flag-key',
    ]);
    expect(code).toBe(0);
    expect(authorization).toBe('Bearer flag-key');
  });
});

describe('mnemo memories', () => {
  const page = { results: [memory], page: 2, page_size: 1, total: 3, has_more: true };

  it('list --json passes the filters and prints the page', async () => {
    let query: Record<string, string> = {};
    let authorization: string | null = null;
    server.use(
      http.get(`${BASE_URL}/v1/memories`, ({ request }) => {
        query = Object.fromEntries(new URL(request.url).searchParams);
        authorization = request.headers.get('authorization');
        return HttpResponse.json(page);
      }),
    );
    const { code, stdout } = await cli([
      'memories',
      'list',
      '--user-id',
      'u_42',
      '--page',
      '2',
      '--page-size',
      '1',
      '--json',
    ]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual(page);
    expect(query).toEqual({ user_id: 'u_42', page: '2', page_size: '1' });
    expect(authorization).toBe('Bearer env-key');
  });

  it('list prints a table and how to get the next page', async () => {
    server.use(http.get(`${BASE_URL}/v1/memories`, () => HttpResponse.json(page)));
    const { code, stdout } = await cli(['memories', 'list']);
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    expect(lines[0]).toMatch(/^ID\s+TYPE\s+OWNER\s+CREATED\s+TEXT$/);
    expect(lines[1]).toContain(memory.id);
    expect(lines[1]).toContain('user:u_42');
    expect(stdout).toContain('next: --page 3');
  });

  it('get and delete hit the memory by id', async () => {
    server.use(
      http.get(`${BASE_URL}/v1/memories/:id`, () => HttpResponse.json(memory)),
      http.delete(`${BASE_URL}/v1/memories/:id`, ({ params }) =>
        HttpResponse.json({ id: params.id, deleted: true }),
      ),
    );
    const shown = await cli(['memories', 'get', memory.id]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(memory.text);
    const deleted = await cli(['memories', 'delete', memory.id]);
    expect(deleted).toMatchObject({ code: 0, stdout: `deleted ${memory.id}\n` });
  });

  it('refuses a non-numeric --page without calling the service', async () => {
    const { code, stderr } = await cli(['memories', 'list', '--page', 'two']);
    expect(code).toBe(2);
    expect(stderr).toContain('error: --page must be a positive integer, got "two"');
    expect(stderr).toContain('Usage: mnemo memories list');
  });

  it('asks for the missing <id>', async () => {
    const { code, stderr } = await cli(['memories', 'get']);
    expect(code).toBe(2);
    expect(stderr).toContain('error: missing <id>');
  });
});

describe('errors and usage', () => {
  const unauthorized = () =>
    http.get(`${BASE_URL}/v1/memories`, () =>
      HttpResponse.json(
        { error: { code: 'UNAUTHORIZED', message: 'Invalid API key' }, request_id: 'req_401' },
        { status: 401 },
      ),
    );

  it('a 401 prints one friendly line and exits 1', async () => {
    server.use(unauthorized());
    const { code, stdout, stderr } = await cli(['memories', 'list']);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe('error UNAUTHORIZED: Invalid API key (request_id req_401)\n');
  });

  it('a 401 with --json prints the error as JSON on stderr', async () => {
    server.use(unauthorized());
    const { code, stdout, stderr } = await cli(['memories', 'list', '--json']);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(JSON.parse(stderr)).toEqual({
      error: { code: 'UNAUTHORIZED', message: 'Invalid API key', status: 401 },
      request_id: 'req_401',
    });
  });

  it('an unreachable service is a failure, not a crash', async () => {
    server.use(http.get(`${BASE_URL}/v1/health`, () => HttpResponse.error()));
    const { code, stderr } = await cli(['health']);
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /^error CONNECTION_ERROR: Connection error: could not reach http:\/\/mnemo.test\/v1\/health \(.+\)\n$/,
    );
  });

  it('an unknown command prints the usage and exits 2', async () => {
    const { code, stdout, stderr } = await cli(['frobnicate']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('error: unknown command "frobnicate"');
    expect(stderr).toContain('Usage: mnemo <command> [options]');
    expect(stderr).toContain('mnemo memories list [--user-id ID] [--page N] [--page-size N]');
  });

  it.each([
    [['memories'], '"memories" needs a subcommand: list, get, delete'],
    [[], 'missing command'],
    [['health', '--nope'], "Unknown option '--nope'"],
    [['health', '--page', '2'], 'health does not take --page'],
    [['health', 'extra'], 'unexpected argument "extra"'],
  ])('%j is a usage error', async (argv, message) => {
    const { code, stderr } = await cli(argv);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
  });

  it('--help prints the usage on stdout and exits 0', async () => {
    const { code, stdout, stderr } = await cli(['--help']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toContain('Usage: mnemo <command> [options]');
  });
});
