import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, InternalServerError, MnemoClient } from '../src/index.js';
import { BASE_URL, envelope } from './fixtures.js';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const client = () =>
  new MnemoClient({ baseUrl: BASE_URL, apiKey: 'test-key', retryBaseMs: 1, maxRetries: 2 });

const ENDPOINT_ID = '11111111-2222-4333-8444-555555555555';
const DELIVERY_ID = '66666666-7777-4888-9999-000000000000';
const endpoint = {
  id: ENDPOINT_ID,
  url: 'https://example.com/hook',
  description: '',
  event_types: ['memory.deleted'],
  enabled: true,
  created_at: '2026-01-31T09:00:00.000Z',
  updated_at: '2026-01-31T09:00:00.000Z',
};

describe('client.webhooks', () => {
  it('create() posts the endpoint once, even when the answer is a 500 (no duplicate endpoint)', async () => {
    const bodies: unknown[] = [];
    server.use(
      http.post(`${BASE_URL}/v1/webhooks/endpoints`, async ({ request }) => {
        bodies.push(await request.json());
        return HttpResponse.json(envelope('INTERNAL', 'boom', 'req_1'), { status: 500 });
      }),
    );
    const error = await client()
      .webhooks.create({ url: endpoint.url, event_types: ['memory.deleted'] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(bodies).toEqual([{ url: endpoint.url, event_types: ['memory.deleted'] }]);
  });

  it('create() returns the endpoint and its secret', async () => {
    server.use(
      http.post(`${BASE_URL}/v1/webhooks/endpoints`, () =>
        HttpResponse.json({ endpoint, secret: 'whsec_abc' }, { status: 201 }),
      ),
    );
    await expect(client().webhooks.create({ url: endpoint.url })).resolves.toEqual({
      endpoint,
      secret: 'whsec_abc',
    });
  });

  it('update(), deliveries() and replay() address the endpoint and delivery by id', async () => {
    const seen: string[] = [];
    server.use(
      http.patch(`${BASE_URL}/v1/webhooks/endpoints/:id`, async ({ request, params }) => {
        seen.push(`PATCH ${String(params.id)} ${JSON.stringify(await request.json())}`);
        return HttpResponse.json({ ...endpoint, enabled: false });
      }),
      http.get(`${BASE_URL}/v1/webhooks/endpoints/:id/deliveries`, ({ request, params }) => {
        seen.push(`GET ${String(params.id)} ${new URL(request.url).search}`);
        return HttpResponse.json({
          results: [],
          page: 1,
          page_size: 50,
          total: 0,
          has_more: false,
        });
      }),
      http.post(
        `${BASE_URL}/v1/webhooks/endpoints/:id/deliveries/:delivery/replay`,
        ({ params }) => {
          seen.push(`REPLAY ${String(params.id)} ${String(params.delivery)}`);
          return HttpResponse.json(envelope('CONFLICT', 'Webhook delivery is pending', 'req_2'), {
            status: 409,
          });
        },
      ),
    );
    const c = client();
    await expect(c.webhooks.update(ENDPOINT_ID, { enabled: false })).resolves.toMatchObject({
      enabled: false,
    });
    await c.webhooks.deliveries(ENDPOINT_ID, { status: 'failed' });
    const error = await c.webhooks.replay(ENDPOINT_ID, DELIVERY_ID).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(seen).toEqual([
      `PATCH ${ENDPOINT_ID} {"enabled":false}`,
      `GET ${ENDPOINT_ID} ?status=failed`,
      `REPLAY ${ENDPOINT_ID} ${DELIVERY_ID}`,
    ]);
  });
});
