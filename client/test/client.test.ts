import { delay, http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  InternalServerError,
  MnemoClient,
  MnemoError,
  NotFoundError,
} from '../src/index.js';
import { BASE_URL, envelope, health, memory } from './fixtures.js';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  server.resetHandlers();
  vi.unstubAllEnvs();
});
afterAll(() => server.close());

function client(options: ConstructorParameters<typeof MnemoClient>[0] = {}) {
  return new MnemoClient({ baseUrl: BASE_URL, apiKey: 'test-key', ...options });
}

/** Captures the requests a handler saw, for assertions on what was sent. */
function recorder() {
  const requests: Request[] = [];
  return { requests, record: (request: Request) => requests.push(request.clone()) };
}

describe('success paths', () => {
  it('health() reads GET /v1/health', async () => {
    server.use(http.get(`${BASE_URL}/v1/health`, () => HttpResponse.json(health)));
    await expect(client().health()).resolves.toEqual(health);
  });

  it('memories.list() sends the query and returns the page', async () => {
    const { requests, record } = recorder();
    const page = { results: [memory()], page: 2, page_size: 10, total: 11, has_more: false };
    server.use(
      http.get(`${BASE_URL}/v1/memories`, ({ request }) => {
        record(request);
        return HttpResponse.json(page);
      }),
    );

    const result = await client().memories.list({
      user_id: 'u_42',
      page: 2,
      page_size: 10,
      namespace: undefined,
      metadata: { plan: 'pro', vip: true },
    });

    expect(result).toEqual(page);
    const query = new URL(requests[0]!.url).searchParams;
    // Owner aliases are folded into owner_id before sending.
    expect(Object.fromEntries(query)).toEqual({
      owner_id: 'u_42',
      page: '2',
      page_size: '10',
      metadata: '{"plan":"pro","vip":true}',
    });
  });

  it('memories.list() without a query sends none', async () => {
    const { requests, record } = recorder();
    server.use(
      http.get(`${BASE_URL}/v1/memories`, ({ request }) => {
        record(request);
        return HttpResponse.json({
          results: [],
          page: 1,
          page_size: 20,
          total: 0,
          has_more: false,
        });
      }),
    );
    await client().memories.list();
    expect(requests[0]!.url).toBe(`${BASE_URL}/v1/memories`);
  });

  it('memories.get() encodes the id into the contract path', async () => {
    const { requests, record } = recorder();
    server.use(
      http.get(`${BASE_URL}/v1/memories/:id`, ({ request }) => {
        record(request);
        return HttpResponse.json(memory());
      }),
    );
    await expect(client().memories.get(memory().id)).resolves.toEqual(memory());
    await client().memories.get('a b');
    expect(requests.map((request) => new URL(request.url).pathname)).toEqual([
      `/v1/memories/${memory().id}`,
      '/v1/memories/a%20b',
    ]);
  });

  it('memories.delete() sends DELETE and returns the confirmation', async () => {
    const id = memory().id;
    server.use(
      http.delete(`${BASE_URL}/v1/memories/:id`, ({ params }) =>
        HttpResponse.json({ id: params.id, deleted: true }),
      ),
    );
    await expect(client().memories.delete(id)).resolves.toEqual({ id, deleted: true });
  });
});

describe('request headers and base URL', () => {
  it('sends the API key as a bearer token', async () => {
    const { requests, record } = recorder();
    server.use(
      http.get(`${BASE_URL}/v1/health`, ({ request }) => {
        record(request);
        return HttpResponse.json(health);
      }),
    );
    await client({ apiKey: 'sk_live_abc' }).health();
    expect(requests[0]!.headers.get('authorization')).toBe('Bearer sk_live_abc');
    expect(requests[0]!.headers.get('accept')).toBe('application/json');
  });

  it('sends no Authorization header when apiKey is null, even with MNEMO_API_KEY set', async () => {
    vi.stubEnv('MNEMO_API_KEY', 'from-env');
    const { requests, record } = recorder();
    server.use(
      http.get(`${BASE_URL}/v1/health`, ({ request }) => {
        record(request);
        return HttpResponse.json(health);
      }),
    );
    await client({ apiKey: null }).health();
    expect(requests[0]!.headers.has('authorization')).toBe(false);
  });

  it('defaults baseUrl and apiKey from MNEMO_BASE_URL and MNEMO_API_KEY', async () => {
    vi.stubEnv('MNEMO_BASE_URL', 'http://from-env.test/');
    vi.stubEnv('MNEMO_API_KEY', 'env-key');
    const { requests, record } = recorder();
    server.use(
      http.get('http://from-env.test/v1/health', ({ request }) => {
        record(request);
        return HttpResponse.json(health);
      }),
    );
    await new MnemoClient().health();
    expect(requests[0]!.headers.get('authorization')).toBe('Bearer env-key');
  });

  it('defaults to http://127.0.0.1:8787 and a 60 s timeout', () => {
    vi.stubEnv('MNEMO_BASE_URL', '');
    const defaults = new MnemoClient();
    expect(defaults.baseUrl).toBe('http://127.0.0.1:8787');
    expect(defaults.timeoutMs).toBe(60_000);
  });

  it.each([
    ['http://mnemo.test/', 'http://mnemo.test/v1/health'],
    ['http://mnemo.test//', 'http://mnemo.test/v1/health'],
    ['http://mnemo.test/prefix/', 'http://mnemo.test/prefix/v1/health'],
    ['http://mnemo.test/prefix', 'http://mnemo.test/prefix/v1/health'],
  ])('base URL %s reaches %s', async (baseUrl, expected) => {
    const fetch = vi.fn(async () => HttpResponse.json(health));
    await new MnemoClient({ baseUrl, fetch }).health();
    expect(fetch).toHaveBeenCalledWith(expected, expect.objectContaining({ method: 'GET' }));
  });

  it('refuses a non-positive timeout', () => {
    expect(() => client({ timeoutMs: 0 })).toThrow(TypeError);
  });
});

describe('error mapping', () => {
  it('maps a 401 envelope to AuthenticationError with code, status and requestId', async () => {
    server.use(
      http.get(`${BASE_URL}/v1/health`, () =>
        HttpResponse.json(envelope('UNAUTHORIZED', 'Invalid API key', 'req_401'), {
          status: 401,
          headers: { 'x-request-id': 'req_401' },
        }),
      ),
    );
    const error = await client()
      .health()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toBeInstanceOf(MnemoError);
    expect(error).toMatchObject({
      name: 'AuthenticationError',
      code: 'UNAUTHORIZED',
      message: 'Invalid API key',
      status: 401,
      requestId: 'req_401',
    });
  });

  it('keeps validation details of a 400', async () => {
    server.use(
      http.get(`${BASE_URL}/v1/memories`, () =>
        HttpResponse.json(
          envelope('BAD_REQUEST', 'Invalid query', 'req_400', { page_size: ['too big'] }),
          {
            status: 400,
          },
        ),
      ),
    );
    const error = await client()
      .memories.list({ page_size: 500 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error).toMatchObject({ code: 'BAD_REQUEST', details: { page_size: ['too big'] } });
  });

  it('maps a 404 to NotFoundError', async () => {
    server.use(
      http.get(`${BASE_URL}/v1/memories/:id`, () =>
        HttpResponse.json(envelope('NOT_FOUND', 'Memory not found'), { status: 404 }),
      ),
    );
    await expect(client().memories.get('missing')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('maps a non-envelope 502 to InternalServerError with a generic code and the header request id', async () => {
    server.use(
      http.get(
        `${BASE_URL}/v1/health`,
        () =>
          new HttpResponse('<html><body>502 Bad Gateway</body></html>', {
            status: 502,
            headers: { 'content-type': 'text/html', 'x-request-id': 'req_proxy' },
          }),
      ),
    );
    const error = await client()
      .health()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({
      code: 'HTTP_ERROR',
      status: 502,
      requestId: 'req_proxy',
      message: 'HTTP 502: <html><body>502 Bad Gateway</body></html>',
    });
  });

  it('reports a 2xx body that is not JSON as INVALID_RESPONSE', async () => {
    server.use(http.get(`${BASE_URL}/v1/health`, () => HttpResponse.text('ok')));
    await expect(client().health()).rejects.toMatchObject({
      code: 'INVALID_RESPONSE',
      status: 200,
    });
  });

  it('maps a network failure to APIConnectionError', async () => {
    server.use(http.get(`${BASE_URL}/v1/health`, () => HttpResponse.error()));
    const error = await client()
      .health()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error).toMatchObject({ code: 'CONNECTION_ERROR', status: undefined });
    expect((error as Error).cause).toBeDefined();
  });
});

describe('timeouts and cancellation', () => {
  it('aborts an attempt after timeoutMs with APITimeoutError', async () => {
    server.use(
      http.get(`${BASE_URL}/v1/health`, async () => {
        await delay('infinite');
        return HttpResponse.json(health);
      }),
    );
    const error = await client({ timeoutMs: 50 })
      .health()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error).toMatchObject({ code: 'TIMEOUT', message: 'Request timed out after 50 ms' });
  });

  it('a per-call timeoutMs overrides the client one', async () => {
    server.use(
      http.get(`${BASE_URL}/v1/health`, async () => {
        await delay('infinite');
        return HttpResponse.json(health);
      }),
    );
    await expect(client().health({ timeoutMs: 30 })).rejects.toBeInstanceOf(APITimeoutError);
  });

  it('follows the caller signal of a call', async () => {
    server.use(
      http.get(`${BASE_URL}/v1/health`, async () => {
        await delay('infinite');
        return HttpResponse.json(health);
      }),
    );
    const controller = new AbortController();
    const pending = client().health({ signal: controller.signal });
    setTimeout(() => controller.abort(new Error('user left')), 20);
    const error = await pending.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(APIUserAbortError);
    expect(error).toMatchObject({ code: 'ABORTED' });
    expect((error as Error).cause).toEqual(new Error('user left'));
  });

  it('follows the client-wide signal, and does not send when it is already aborted', async () => {
    const fetch = vi.fn(async () => HttpResponse.json(health));
    const controller = new AbortController();
    controller.abort();
    await expect(client({ fetch, signal: controller.signal }).health()).rejects.toBeInstanceOf(
      APIUserAbortError,
    );
    expect(fetch).not.toHaveBeenCalled();
  });

  it('gives each attempt a fresh AbortController that the fetch receives', async () => {
    const signals: AbortSignal[] = [];
    const fetch = vi.fn(async (_url: string, init: RequestInit) => {
      signals.push(init.signal!);
      return HttpResponse.json(health);
    });
    const api = client({ fetch });
    await api.health();
    await api.health();
    expect(signals).toHaveLength(2);
    expect(signals[0]).not.toBe(signals[1]);
    expect(signals.every((signal) => !signal.aborted)).toBe(true);
  });
});
