import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, MnemoClient, NotFoundError } from '../src/index.js';
import { BASE_URL, envelope } from './fixtures.js';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const client = () =>
  new MnemoClient({ baseUrl: BASE_URL, apiKey: 'test-key', retryBaseMs: 1, maxRetries: 1 });

const SOURCE = '0b9f4a52-8a0e-4c55-9a8e-2f1c3b7d6e01';
const TARGET = '7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f';
const QUERY_ID = '5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d';

const linkRow = (relation = 'related') => ({
  id: '11111111-2222-4333-8444-555555555555',
  source_id: SOURCE,
  target_id: TARGET,
  relation,
  created_at: '2026-01-31T09:00:00.000Z',
});

describe('client.links', () => {
  it('add() posts the edge to the memory’s path; remove() sends target and relation as the query', async () => {
    const seen: string[] = [];
    server.use(
      http.post(`${BASE_URL}/v1/memories/:id/links`, async ({ request, params }) => {
        seen.push(`POST ${params.id as string} ${JSON.stringify(await request.json())}`);
        return HttpResponse.json({ link: linkRow('mentions'), created: true });
      }),
      http.get(`${BASE_URL}/v1/memories/:id/links`, ({ params }) => {
        seen.push(`GET ${params.id as string}`);
        return HttpResponse.json({ results: [linkRow('mentions')] });
      }),
      http.delete(`${BASE_URL}/v1/memories/:id/links`, ({ request, params }) => {
        const url = new URL(request.url);
        seen.push(`DELETE ${params.id as string} ${url.searchParams.toString()}`);
        return HttpResponse.json({ deleted: [linkRow('mentions')] });
      }),
    );
    const c = client();
    const added = await c.links.add(SOURCE, { target_id: TARGET, relation: 'mentions' });
    expect(added).toEqual({ link: linkRow('mentions'), created: true });
    expect((await c.links.list(SOURCE)).results).toHaveLength(1);
    const removed = await c.links.remove(SOURCE, { target_id: TARGET, relation: 'mentions' });
    expect(removed.deleted[0]?.relation).toBe('mentions');
    expect(seen).toEqual([
      `POST ${SOURCE} {"target_id":"${TARGET}","relation":"mentions"}`,
      `GET ${SOURCE}`,
      `DELETE ${SOURCE} target_id=${TARGET}&relation=mentions`,
    ]);
  });

  it('maps a missing edge to NotFoundError', async () => {
    server.use(
      http.delete(`${BASE_URL}/v1/memories/:id/links`, () =>
        HttpResponse.json(envelope('NOT_FOUND', 'No link'), { status: 404 }),
      ),
    );
    await expect(client().links.remove(SOURCE, { target_id: TARGET })).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });
});

describe('client.history', () => {
  it('list() folds the owner into owner_id and sends the filters as the query', async () => {
    let query = '';
    server.use(
      http.get(`${BASE_URL}/v1/search/history`, ({ request }) => {
        query = new URL(request.url).searchParams.toString();
        return HttpResponse.json({
          results: [
            {
              query_id: QUERY_ID,
              request_id: 'req-1',
              owner_id: 'jane',
              owner_type: 'user',
              query: 'tea',
              payload: { query: 'tea', user_id: 'jane' },
              created_at: '2026-01-31T09:00:00.000Z',
            },
          ],
          page: 2,
          page_size: 5,
          total: 6,
          has_more: false,
        });
      }),
    );
    const page = await client().history.list({
      userId: 'jane',
      page: 2,
      page_size: 5,
      since: '2026-01-01',
    });
    expect(page.results[0]?.query_id).toBe(QUERY_ID);
    expect(new URLSearchParams(query)).toEqual(
      new URLSearchParams({ page: '2', page_size: '5', since: '2026-01-01', owner_id: 'jane' }),
    );
  });

  it('replay() posts the query id and returns the search response', async () => {
    let body: unknown;
    server.use(
      http.post(`${BASE_URL}/v1/search/replay`, async ({ request }) => {
        body = await request.json();
        return HttpResponse.json({
          query_id: QUERY_ID,
          results: [{ chunk_id: 'c1', memory_id: SOURCE, chunk_index: 0, text: 'tea', score: 0.8 }],
          page: 1,
          page_size: 10,
          total: 1,
          has_more: false,
        });
      }),
    );
    const replayed = await client().history.replay(QUERY_ID);
    expect(body).toEqual({ query_id: QUERY_ID });
    expect(replayed.query_id).toBe(QUERY_ID);
    expect(replayed.results[0]?.memory_id).toBe(SOURCE);
  });
});

describe('client.pins and client.feedback.context', () => {
  it('update() sends the wire owner; a full profile is a ConflictError', async () => {
    const bodies: unknown[] = [];
    server.use(
      http.patch(`${BASE_URL}/v1/profile/pins`, async ({ request }) => {
        bodies.push(await request.json());
        if (bodies.length === 2)
          return HttpResponse.json(envelope('CONFLICT', 'at most 50 pins'), { status: 409 });
        return HttpResponse.json({
          owner_id: 'jane',
          owner_type: 'team',
          pins: [
            {
              memory_id: SOURCE,
              text: 'Answer in French',
              lifecycle_state: 'active',
              pinned_at: '2026-01-31T09:00:00.000Z',
            },
          ],
          max_pins: 50,
        });
      }),
    );
    const c = client();
    const pins = await c.pins.update({ ownerId: 'jane', ownerType: 'team', pin: [SOURCE] });
    expect(pins.pins.map((pin) => pin.memory_id)).toEqual([SOURCE]);
    await expect(c.pins.update({ ownerId: 'jane', pin: [TARGET] })).rejects.toBeInstanceOf(
      ConflictError,
    );
    expect(bodies).toEqual([
      { pin: [SOURCE], owner_id: 'jane', owner_type: 'team' },
      { pin: [TARGET], owner_id: 'jane' },
    ]);
  });

  it('get() sends the owner as the query', async () => {
    let query = '';
    server.use(
      http.get(`${BASE_URL}/v1/profile/pins`, ({ request }) => {
        query = new URL(request.url).searchParams.toString();
        return HttpResponse.json({ owner_id: 'jane', owner_type: 'user', pins: [], max_pins: 50 });
      }),
    );
    expect((await client().pins.get({ ownerId: 'jane' })).pins).toEqual([]);
    expect(query).toBe('owner_id=jane');
  });

  it('feedback.context() posts the feedback row', async () => {
    let body: unknown;
    server.use(
      http.post(`${BASE_URL}/v1/context/feedback`, async ({ request }) => {
        body = await request.json();
        return HttpResponse.json({
          feedback_id: QUERY_ID,
          request_id: 'req-9',
          rating: 'negative',
          applied: 2,
          helpful_memory_ids: [],
          unhelpful_memory_ids: [SOURCE],
          comment: 'stale',
          created_at: '2026-01-31T09:00:00.000Z',
        });
      }),
    );
    const sent = {
      request_id: 'req-9',
      rating: 'negative' as const,
      unhelpful_memory_ids: [SOURCE],
      comment: 'stale',
    };
    const result = await client().feedback.context(sent);
    expect(body).toEqual(sent);
    expect(result.applied).toBe(2);
  });
});
