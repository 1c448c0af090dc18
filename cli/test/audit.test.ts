import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BASE_URL, envelope } from '../../client/test/fixtures.js';
import { run } from '../src/run.js';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const home = mkdtempSync(join(tmpdir(), 'mnemo-cli-audit-'));

async function cli(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    stdout: { write: (chunk: string) => (stdout += chunk) },
    stderr: { write: (chunk: string) => (stderr += chunk) },
    env: { HOME: home, MNEMO_BASE_URL: BASE_URL, MNEMO_API_KEY: 'env-key' },
  });
  return { code, stdout, stderr };
}

const row = (status: number, route: string | null, path = '/v1/memories') => ({
  id: '11111111-2222-4333-8444-555555555555',
  request_id: `req-${status}`,
  api_key_id: null,
  method: 'GET',
  path,
  route,
  status,
  duration_ms: 4,
  ip: '127.0.0.1',
  user_agent: null,
  created_at: '2026-01-31T09:00:00.000Z',
});

describe('mnemo audit', () => {
  it('sends the flags as the query and prints a table with the next page', async () => {
    let query = '';
    server.use(
      http.get(`${BASE_URL}/v1/audit/log`, ({ request }) => {
        query = new URL(request.url).searchParams.toString();
        return HttpResponse.json({
          results: [row(404, '/v1/memories/:id'), row(404, null, '/v1/nope')],
          page: 1,
          page_size: 2,
          total: 5,
          has_more: true,
        });
      }),
    );
    const { code, stdout, stderr } = await cli([
      'audit',
      '--status',
      '4xx',
      '--route',
      '/v1/memories/:id',
      '--method',
      'GET',
      '--from',
      '2026-01-01',
      '--page-size',
      '2',
    ]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(new URLSearchParams(query)).toEqual(
      new URLSearchParams({
        from: '2026-01-01',
        route: '/v1/memories/:id',
        method: 'GET',
        status: '4xx',
        page_size: '2',
      }),
    );
    expect(stdout).toContain('STATUS');
    expect(stdout).toContain('/v1/memories/:id');
    // Without a route pattern the path is shown.
    expect(stdout).toContain('/v1/nope');
    expect(stdout).toContain('5 in total; next: --page 2');
  });

  it('prints the response as is with --json', async () => {
    const body = { results: [], page: 1, page_size: 50, total: 0, has_more: false };
    server.use(http.get(`${BASE_URL}/v1/audit/log`, () => HttpResponse.json(body)));
    expect(JSON.parse((await cli(['audit', '--json'])).stdout)).toEqual(body);
    expect((await cli(['audit'])).stdout).toContain('no audit records match');
  });

  it('refuses a bad flag before any request, and reports a refused filter', async () => {
    const method = await cli(['audit', '--method', 'TRACE']);
    expect(method.code).not.toBe(0);
    expect(method.stderr).toContain('TRACE');
    server.use(
      http.get(`${BASE_URL}/v1/audit/log`, () =>
        HttpResponse.json(
          envelope('BAD_REQUEST', 'Invalid query', 'req_1', {
            status: ['must be a status code (404) or a class (4xx)'],
          }),
          { status: 400 },
        ),
      ),
    );
    const status = await cli(['audit', '--status', '6xx']);
    expect(status.code).not.toBe(0);
    expect(status.stderr).toContain('must be a status code');
  });
});
