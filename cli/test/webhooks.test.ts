import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BASE_URL } from '../../client/test/fixtures.js';
import { run } from '../src/run.js';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const home = mkdtempSync(join(tmpdir(), 'mnemo-cli-webhooks-'));

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

const endpoint = {
  id: '11111111-2222-4333-8444-555555555555',
  url: 'https://example.com/hook',
  description: 'CRM',
  event_types: ['memory.created', 'memory.deleted'],
  enabled: true,
  created_at: '2026-01-31T09:00:00.000Z',
  updated_at: '2026-01-31T09:00:00.000Z',
};

describe('mnemo webhooks', () => {
  it('create sends the URL and event types and prints the secret once', async () => {
    let body: unknown;
    server.use(
      http.post(`${BASE_URL}/v1/webhooks/endpoints`, async ({ request }) => {
        body = await request.json();
        return HttpResponse.json({ endpoint, secret: 'whsec_c2VjcmV0' }, { status: 201 });
      }),
    );
    const { code, stdout } = await cli([
      'webhooks',
      'create',
      endpoint.url,
      '--events',
      'memory.created,memory.deleted',
      '--description',
      'CRM',
    ]);
    expect(code).toBe(0);
    expect(body).toEqual({
      url: endpoint.url,
      event_types: ['memory.created', 'memory.deleted'],
      description: 'CRM',
    });
    expect(stdout).toContain('whsec_c2VjcmV0');
    expect(stdout).toContain('memory.created, memory.deleted');
  });

  it('refuses an unknown event type before any request', async () => {
    const { code, stderr } = await cli(['webhooks', 'create', endpoint.url, '--events', 'nope']);
    expect(code).toBe(2);
    expect(stderr).toContain('nope is not an event type');
  });

  it('update --disable sends enabled: false; deliveries prints the log as a table', async () => {
    const seen: string[] = [];
    server.use(
      http.patch(`${BASE_URL}/v1/webhooks/endpoints/:id`, async ({ request }) => {
        seen.push(JSON.stringify(await request.json()));
        return HttpResponse.json({ ...endpoint, enabled: false });
      }),
      http.get(`${BASE_URL}/v1/webhooks/endpoints/:id/deliveries`, ({ request }) => {
        seen.push(new URL(request.url).search);
        return HttpResponse.json({
          results: [
            {
              id: '66666666-7777-4888-9999-000000000000',
              endpoint_id: endpoint.id,
              event_id: '22222222-3333-4444-8555-666666666666',
              event_type: 'memory.deleted',
              memory_id: null,
              status: 'failed',
              attempts: 10,
              response_status: 503,
              last_error: 'HTTP 503',
              last_attempt_at: '2026-01-31T10:00:00.000Z',
              next_attempt_at: null,
              created_at: '2026-01-31T09:00:00.000Z',
              payload: {},
            },
          ],
          page: 1,
          page_size: 50,
          total: 1,
          has_more: false,
        });
      }),
    );
    const updated = await cli(['webhooks', 'update', endpoint.id, '--disable']);
    expect(updated.code).toBe(0);
    expect(updated.stdout).toMatch(/enabled\s+no/);
    const log = await cli(['webhooks', 'deliveries', endpoint.id, '--status', 'failed']);
    expect(log.code).toBe(0);
    expect(log.stdout).toMatch(/memory\.deleted\s+failed\s+10\s+503/);
    expect(seen).toEqual(['{"enabled":false}', '?status=failed']);
  });
});
