import { delay, http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  OpenAIEmbeddingProvider,
  type OpenAIEmbeddingOptions,
} from '../../src/providers/embeddings/openai.js';
import { EmbeddingError } from '../../src/providers/embeddings/types.js';
import { retryAfterMs } from '../../src/providers/http-retry.js';

const BASE = 'https://embeddings.test/v1';
const URL_ = `${BASE}/embeddings`;
const API_KEY = 'sk-test-0123456789abcdef';
const DIM = 3;

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

interface EmbeddingsBody {
  model: string;
  input: string[];
  encoding_format: string;
  dimensions?: number;
}

/** A deterministic, non-normalised vector per input, so tests can tell inputs apart. */
function rawVector(text: string): number[] {
  const n = text.length;
  return [n, 1, 2];
}

function unit(v: number[]): number[] {
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/** Records each request and answers with one vector per input (optionally reversed). */
function recordingHandler(options: { reverse?: boolean; dimension?: number } = {}) {
  const requests: { body: EmbeddingsBody; headers: Headers }[] = [];
  const handler = http.post(URL_, async ({ request }) => {
    const body = (await request.json()) as EmbeddingsBody;
    requests.push({ body, headers: request.headers });
    let data = body.input.map((text, index) => ({
      object: 'embedding',
      index,
      embedding: options.dimension
        ? new Array<number>(options.dimension).fill(0.5)
        : rawVector(text),
    }));
    if (options.reverse) data = data.reverse();
    return HttpResponse.json({ object: 'list', data, model: body.model, usage: {} });
  });
  return { handler, requests };
}

function makeProvider(overrides: Partial<OpenAIEmbeddingOptions> = {}) {
  const sleeps: number[] = [];
  const provider = new OpenAIEmbeddingProvider({
    baseUrl: BASE,
    model: 'text-embedding-3-small',
    dimension: DIM,
    apiKey: API_KEY,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
    ...overrides,
  });
  return { provider, sleeps };
}

async function embedError(promise: Promise<unknown>): Promise<EmbeddingError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EmbeddingError);
  return error as EmbeddingError;
}

describe('OpenAIEmbeddingProvider', () => {
  it('exposes provider, model, dimension and version', () => {
    const { provider } = makeProvider();
    expect(provider.provider).toBe('openai');
    expect(provider.model).toBe('text-embedding-3-small');
    expect(provider.dimension).toBe(DIM);
    expect(provider.version).toBe('openai:text-embedding-3-small:3');
  });

  it('splits inputs into sequential batches, sends the key and keeps input order', async () => {
    const { handler, requests } = recordingHandler();
    server.use(handler);
    const { provider } = makeProvider({ batchSize: 2, baseUrl: `${BASE}/` });
    const texts = ['a', 'bb', 'ccc'];

    const vectors = await provider.embed(texts, 'document');

    expect(requests).toHaveLength(2);
    expect(requests[0]!.body).toEqual({
      model: 'text-embedding-3-small',
      input: ['a', 'bb'],
      encoding_format: 'float',
    });
    expect(requests[1]!.body.input).toEqual(['ccc']);
    expect('dimensions' in requests[0]!.body).toBe(false);
    for (const { headers } of requests) {
      expect(headers.get('authorization')).toBe(`Bearer ${API_KEY}`);
      expect(headers.get('content-type')).toBe('application/json');
    }
    expect(vectors).toHaveLength(3);
    texts.forEach((text, i) => {
      expect(vectors[i]).toEqual(unit(rawVector(text)).map((x) => expect.closeTo(x, 12)));
    });
  });

  it('sends `dimensions` only when asked', async () => {
    const { handler, requests } = recordingHandler();
    server.use(handler);
    const { provider } = makeProvider({ sendDimensions: true });
    await provider.embed(['x'], 'query');
    expect(requests).toHaveLength(1);
    expect(requests[0]!.body.dimensions).toBe(DIM);
  });

  it('sends no Authorization header without a key, and sends extra headers', async () => {
    const { handler, requests } = recordingHandler();
    server.use(handler);
    const { provider } = makeProvider({
      apiKey: undefined,
      headers: { 'api-key': 'azure-secret-key', 'Content-Type': 'application/json; charset=utf-8' },
    });
    await provider.embed(['x'], 'document');
    expect(requests).toHaveLength(1);
    expect(requests[0]!.headers.get('api-key')).toBe('azure-secret-key');
    // A caller's header replaces the default of the same name, whatever its case.
    expect(requests[0]!.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(requests[0]!.headers.has('authorization')).toBe(false);
  });

  it('keeps the query string of the base URL (Azure api-version)', async () => {
    let seen: string | undefined;
    server.use(
      http.post('https://azure.test/openai/deployments/emb/embeddings', ({ request }) => {
        seen = request.url;
        return HttpResponse.json({ data: [{ index: 0, embedding: [1, 0, 0] }] });
      }),
    );
    const { provider } = makeProvider({
      baseUrl: 'https://azure.test/openai/deployments/emb?api-version=2024-02-01',
    });
    await provider.embed(['x'], 'document');
    expect(seen).toBe(
      'https://azure.test/openai/deployments/emb/embeddings?api-version=2024-02-01',
    );
  });

  it('returns [] for no inputs without any request', async () => {
    const { handler, requests } = recordingHandler();
    server.use(handler);
    const { provider } = makeProvider();
    await expect(provider.embed([], 'document')).resolves.toEqual([]);
    expect(requests).toHaveLength(0);
  });

  it('orders results by `index` when the server reorders them', async () => {
    const { handler, requests } = recordingHandler({ reverse: true });
    server.use(handler);
    const { provider } = makeProvider();
    const texts = ['one', 'three', 'fivefive'];
    const vectors = await provider.embed(texts, 'document');
    expect(requests).toHaveLength(1);
    texts.forEach((text, i) => {
      expect(vectors[i]).toEqual(unit(rawVector(text)).map((x) => expect.closeTo(x, 12)));
    });
  });

  it('L2-normalises vectors the server did not normalise', async () => {
    server.use(
      http.post(URL_, () => HttpResponse.json({ data: [{ index: 0, embedding: [3, 4, 0] }] })),
    );
    const { provider } = makeProvider();
    const [vector] = await provider.embed(['x'], 'document');
    expect(vector).toEqual([0.6, 0.8, 0].map((x) => expect.closeTo(x, 12)));
    expect(Math.hypot(...vector!)).toBeCloseTo(1, 12);
  });

  it('waits for Retry-After on 429 and then succeeds', async () => {
    let calls = 0;
    server.use(
      http.post(URL_, () => {
        calls += 1;
        if (calls === 1) {
          return HttpResponse.json(
            { error: { message: 'Rate limit reached', type: 'requests' } },
            { status: 429, headers: { 'retry-after': '1' } },
          );
        }
        return HttpResponse.json({ data: [{ index: 0, embedding: [1, 0, 0] }] });
      }),
    );
    const { provider, sleeps } = makeProvider();
    await expect(provider.embed(['x'], 'document')).resolves.toEqual([[1, 0, 0]]);
    expect(calls).toBe(2);
    expect(sleeps).toEqual([1000]);
  });

  it('gives up on 500 after maxRetries retries with full-jitter backoff', async () => {
    let calls = 0;
    server.use(
      http.post(URL_, () => {
        calls += 1;
        return HttpResponse.json(
          { error: { message: 'The server had an error' } },
          { status: 500 },
        );
      }),
    );
    const { provider, sleeps } = makeProvider({
      maxRetries: 2,
      retryBaseMs: 100,
      random: () => 0.5,
    });
    const error = await embedError(provider.embed(['x'], 'document'));
    expect(calls).toBe(3);
    expect(error.status).toBe(500);
    expect(error.message).toContain('HTTP 500');
    expect(error.message).toContain('The server had an error');
    // random(0, 100 * 2^n) with random() = 0.5
    expect(sleeps).toEqual([50, 100]);
  });

  it('caps the backoff at 8 s', async () => {
    let calls = 0;
    server.use(
      http.post(URL_, () => {
        calls += 1;
        return new HttpResponse('bad gateway', { status: 502 });
      }),
    );
    const { provider, sleeps } = makeProvider({
      maxRetries: 3,
      retryBaseMs: 5_000,
      random: () => 0.999,
    });
    const error = await embedError(provider.embed(['x'], 'document'));
    expect(calls).toBe(4);
    expect(error.status).toBe(502);
    expect(error.message).toContain('bad gateway');
    expect(sleeps[0]).toBeCloseTo(4_995, 0);
    expect(sleeps[1]).toBeCloseTo(7_992, 0);
    expect(sleeps[2]).toBeCloseTo(7_992, 0);
  });

  it('fails a 400 at once with the server message and without the API key', async () => {
    let calls = 0;
    server.use(
      http.post(URL_, () => {
        calls += 1;
        return HttpResponse.json(
          { error: { message: `Invalid input for key ${API_KEY}`, type: 'invalid_request_error' } },
          { status: 400 },
        );
      }),
    );
    const { provider, sleeps } = makeProvider();
    const error = await embedError(provider.embed(['x'], 'document'));
    expect(calls).toBe(1);
    expect(sleeps).toEqual([]);
    expect(error.status).toBe(400);
    expect(error.message).toContain('HTTP 400');
    expect(error.message).toContain('Invalid input for key');
    expect(error.message).not.toContain(API_KEY);
  });

  it('bounds the error excerpt of a long non-JSON body', async () => {
    server.use(http.post(URL_, () => new HttpResponse('x'.repeat(5000), { status: 401 })));
    const { provider } = makeProvider();
    const error = await embedError(provider.embed(['x'], 'document'));
    expect(error.status).toBe(401);
    expect(error.message.length).toBeLessThan(300);
  });

  it('rejects vectors of the wrong dimension with a hint', async () => {
    const { handler, requests } = recordingHandler({ dimension: 768 });
    server.use(handler);
    const { provider } = makeProvider({ dimension: 1536 });
    const error = await embedError(provider.embed(['x'], 'document'));
    expect(requests).toHaveLength(1);
    expect(error.message).toBe(
      'openai returned vectors of dimension 768, expected 1536: set MNEMO_EMBEDDINGS_DIMENSIONS',
    );
  });

  it.each([
    ['too few embeddings', { data: [] }, /0 embeddings for 1 inputs/],
    ['no data', { error: null }, /no `data` array/],
    ['non-finite values', { data: [{ index: 0, embedding: [1, null, 0] }] }, /non-finite/],
    ['a bad index', { data: [{ index: 5, embedding: [1, 0, 0] }] }, /invalid index 5/],
    ['a zero vector', { data: [{ index: 0, embedding: [0, 0, 0] }] }, /zero vector/],
  ])('rejects an answer with %s', async (_name, body, message) => {
    server.use(http.post(URL_, () => HttpResponse.json(body)));
    const { provider } = makeProvider();
    const error = await embedError(provider.embed(['x'], 'document'));
    expect(error.message).toMatch(message);
  });

  it('retries a network error and then succeeds', async () => {
    let calls = 0;
    server.use(
      http.post(URL_, () => {
        calls += 1;
        if (calls === 1) return HttpResponse.error();
        return HttpResponse.json({ data: [{ index: 0, embedding: [0, 2, 0] }] });
      }),
    );
    const { provider, sleeps } = makeProvider();
    await expect(provider.embed(['x'], 'document')).resolves.toEqual([[0, 1, 0]]);
    expect(calls).toBe(2);
    expect(sleeps).toHaveLength(1);
  });

  it('reports a network error after the last retry without a status', async () => {
    let calls = 0;
    server.use(
      http.post(URL_, () => {
        calls += 1;
        return HttpResponse.error();
      }),
    );
    const { provider } = makeProvider({ maxRetries: 1 });
    const error = await embedError(provider.embed(['x'], 'document'));
    expect(calls).toBe(2);
    expect(error.status).toBeUndefined();
    expect(error.message).toMatch(/failed after 2 attempt\(s\): network error/);
  });

  it('times out a slow attempt and retries it', async () => {
    let calls = 0;
    server.use(
      http.post(URL_, async () => {
        calls += 1;
        if (calls === 1) await delay(2_000);
        return HttpResponse.json({ data: [{ index: 0, embedding: [0, 0, 5] }] });
      }),
    );
    const { provider, sleeps } = makeProvider({ timeoutMs: 50 });
    const started = Date.now();
    await expect(provider.embed(['x'], 'document')).resolves.toEqual([[0, 0, 1]]);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(calls).toBe(2);
    expect(sleeps).toHaveLength(1);
  });

  it('says a request timed out when every attempt does', async () => {
    let calls = 0;
    server.use(
      http.post(URL_, async () => {
        calls += 1;
        await delay(2_000);
        return HttpResponse.json({ data: [] });
      }),
    );
    const { provider } = makeProvider({ timeoutMs: 30, maxRetries: 1 });
    const error = await embedError(provider.embed(['x'], 'document'));
    expect(calls).toBe(2);
    expect(error.message).toContain('timed out after 30 ms');
  });
});

describe('retryAfterMs', () => {
  it('reads seconds and HTTP dates, caps at 30 s and ignores garbage', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(retryAfterMs('2', now)).toBe(2000);
    expect(retryAfterMs('0.5', now)).toBe(500);
    expect(retryAfterMs('120', now)).toBe(30_000);
    expect(retryAfterMs('Wed, 01 Jan 2025 00:00:05 GMT', now)).toBe(5000);
    expect(retryAfterMs('Tue, 31 Dec 2024 23:59:00 GMT', now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(null, now)).toBeUndefined();
  });
});
