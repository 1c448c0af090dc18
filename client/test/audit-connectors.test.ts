import { DEFAULT_CONNECTOR_SETTINGS } from '@mnemo/contract';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BadRequestError, MnemoClient } from '../src/index.js';
import { BASE_URL, envelope } from './fixtures.js';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const client = () =>
  new MnemoClient({ baseUrl: BASE_URL, apiKey: 'test-key', retryBaseMs: 1, maxRetries: 1 });

const entry = {
  id: '11111111-2222-4333-8444-555555555555',
  request_id: 'req-1',
  api_key_id: null,
  method: 'GET',
  path: '/v1/memories/0b9f4a52-8a0e-4c55-9a8e-2f1c3b7d6e01',
  route: '/v1/memories/:id',
  status: 404,
  duration_ms: 3,
  ip: '127.0.0.1',
  user_agent: null,
  created_at: '2026-01-31T09:00:00.000Z',
};

describe('client.audit', () => {
  it('log() sends the filters it was given as the query, with the key', async () => {
    const seen: Array<{ query: string; auth: string | null }> = [];
    server.use(
      http.get(`${BASE_URL}/v1/audit/log`, ({ request }) => {
        seen.push({
          query: new URL(request.url).searchParams.toString(),
          auth: request.headers.get('authorization'),
        });
        return HttpResponse.json({
          results: [entry],
          page: 2,
          page_size: 10,
          total: 11,
          has_more: false,
        });
      }),
    );
    const page = await client().audit.log({
      status: '4xx',
      route: '/v1/memories/:id',
      page: 2,
      page_size: 10,
      from: undefined,
    });
    expect(page.results[0]).toEqual(entry);
    expect(seen).toEqual([
      {
        query: 'status=4xx&route=%2Fv1%2Fmemories%2F%3Aid&page=2&page_size=10',
        auth: 'Bearer test-key',
      },
    ]);
  });

  it('log() surfaces a refused filter as BadRequestError with its details', async () => {
    server.use(
      http.get(`${BASE_URL}/v1/audit/log`, () =>
        HttpResponse.json(
          envelope('BAD_REQUEST', 'Invalid query', 'req_9', { status: ['must be a status'] }),
          { status: 400 },
        ),
      ),
    );
    const error = await client()
      .audit.log({ status: '6xx' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).details).toEqual({ status: ['must be a status'] });
  });

  it('pruningMetrics() reads GET /v1/pruning/metrics', async () => {
    const metrics = {
      workspace_id: '7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f',
      memories: { total: 3, active: 2, replaced: 0, archived: 1, expired_pending: 0 },
      duplicates: {
        exact_active: 0,
        superseded: {
          hygiene_duplicate: 1,
          near_duplicate: 0,
          semantic_duplicate: 0,
          covered_by_existing: 0,
        },
      },
      chunks: { total: 4, active: 3, per_memory_avg: 1.33, per_memory_max: 2, orphaned: 0 },
      generated_at: '2026-01-31T09:00:00.000Z',
    };
    server.use(http.get(`${BASE_URL}/v1/pruning/metrics`, () => HttpResponse.json(metrics)));
    expect(await client().audit.pruningMetrics()).toEqual(metrics);
  });
});

describe('client.connectors', () => {
  it('get() reads and update() PATCHes the patch as given, returning all settings', async () => {
    const bodies: unknown[] = [];
    const updated = {
      ...DEFAULT_CONNECTOR_SETTINGS,
      webhook: { ...DEFAULT_CONNECTOR_SETTINGS.webhook, enabled: true },
      updated_at: '2026-01-31T09:00:00.000Z',
    };
    server.use(
      http.get(`${BASE_URL}/v1/connectors/settings`, () =>
        HttpResponse.json({ ...DEFAULT_CONNECTOR_SETTINGS, updated_at: null }),
      ),
      http.patch(`${BASE_URL}/v1/connectors/settings`, async ({ request }) => {
        bodies.push(await request.json());
        return HttpResponse.json(updated);
      }),
    );
    const c = client();
    expect((await c.connectors.get()).updated_at).toBeNull();
    expect(await c.connectors.update({ webhook: { enabled: true } })).toEqual(updated);
    expect(bodies).toEqual([{ webhook: { enabled: true } }]);
  });
});
