import { delay, http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HttpReranker, type HttpRerankerOptions } from '../../src/providers/rerank/http.js';
import { LocalReranker } from '../../src/providers/rerank/local.js';
import { RerankError } from '../../src/providers/rerank/types.js';
import { tokensOf } from '../../src/text/tokens.js';

describe('LocalReranker', () => {
  const reranker = new LocalReranker();

  it('is named local', () => {
    expect(reranker.name).toBe('local');
  });

  it('ranks words together above the same words scattered, above a lone common word', async () => {
    const filler = 'the weather report mentioned clouds over the harbour and a calm sea ';
    const together = `${filler}My sister moved to Lisbon last spring. ${filler}`;
    const scattered = `My sister ${filler.repeat(3)} moved ${filler.repeat(3)} to Lisbon.`;
    const common = `${filler}My neighbour moved a sofa upstairs. ${filler}`;
    const [a, b, c] = await reranker.rerank('sister moved Lisbon', [common, scattered, together]);
    expect(b!).toBeGreaterThan(a!);
    expect(c!).toBeGreaterThan(b!);
    // Same coverage, so the gap is proximity and phrase: the adjacent version gets all of both.
    expect(c!).toBeCloseTo(1, 10);
    expect(c! - b!).toBeGreaterThan(0.2);
  });

  it('weights rare query words above frequent ones (IDF over the candidates)', async () => {
    const documents = [
      'Coffee with oat milk every morning',
      'Coffee beans from Ethiopia',
      'Coffee is too bitter without sugar',
      'Allergic to peanuts, carries an epipen',
      'Prefers oolong in the afternoon',
    ];
    // `coffee` is in three candidates, `peanuts` in one: the peanut document should win even
    // though each matches one query word.
    const scores = await reranker.rerank('coffee peanuts', documents);
    expect(scores[3]!).toBeGreaterThan(scores[0]!);
    expect(scores[0]).toBe(scores[1]);
    expect(scores[4]).toBe(0);
  });

  it('matches phrases in query order', async () => {
    const scores = await reranker.rerank('new york city', [
      'new york city marathon',
      'city york new marathon',
    ]);
    expect(scores[0]!).toBeGreaterThan(scores[1]!);
  });

  it('falls back to all words for a stopword-only query', async () => {
    const scores = await reranker.rerank('who is it', [
      'Guess who is it at the door',
      'Kayaking on weekends',
    ]);
    expect(scores[0]!).toBeGreaterThan(0.9);
    expect(scores[1]).toBe(0);
  });

  it('scores a query without words, and no documents, sensibly', async () => {
    await expect(reranker.rerank('?!', ['anything', ''])).resolves.toEqual([0, 0]);
    await expect(reranker.rerank('coffee', [])).resolves.toEqual([]);
  });

  it('scores empty and wordless documents 0', async () => {
    const scores = await reranker.rerank('coffee order', ['', '   ', '...', 'coffee order']);
    expect(scores.slice(0, 3)).toEqual([0, 0, 0]);
    expect(scores[3]!).toBeGreaterThan(0.9);
  });

  it('scores a one-stem query by coverage alone', async () => {
    const scores = await reranker.rerank('the coffees', ['coffee', 'I drink coffee daily', 'tea']);
    expect(scores).toEqual([1, 1, 0]);
  });

  it('is deterministic and keeps every score in 0..1', async () => {
    const query = 'Where did Anna move after her job in Berlin ended?';
    const documents = [
      'Anna moved to Munich after the Berlin job ended.',
      'Berlin is the capital of Germany.',
      'Anna likes hiking; she ended up moving twice.',
      '',
      'Job job job Berlin Berlin Anna Anna moved moved ended',
      'Unrelated text about gardening and tomatoes.',
    ];
    const first = await reranker.rerank(query, documents);
    const second = await new LocalReranker().rerank(query, [...documents]);
    expect(second).toEqual(first);
    expect(first).toHaveLength(documents.length);
    for (const score of first) {
      expect(score).toBeGreaterThanOrEqual(0);
      expect(score).toBeLessThanOrEqual(1);
    }
    expect(first[0]!).toBeGreaterThan(first[1]!);
    expect(first[0]!).toBeGreaterThan(first[2]!);
    expect(first[5]).toBe(0);
  });

  describe('with the search’s tokens (options.tokensOf)', () => {
    const documents = [
      'Anna moved to Munich after the Berlin job ended.',
      'Who is it? It is Anna, back from Berlin; she is moving again.',
      'Berlin is the capital of Germany.',
      '',
      'Unrelated text about gardening and tomatoes.',
    ];

    it('scores exactly as from the texts, for content and stopword-only queries', async () => {
      for (const query of ['Where did Anna move after her job in Berlin ended?', 'who is it']) {
        const given = await reranker.rerank(query, documents, {
          tokensOf: (index) => tokensOf(documents[index]!),
        });
        expect(given).toEqual(await reranker.rerank(query, documents));
      }
    });

    it('reads the tokens it is given instead of cutting the texts again', async () => {
      const cut: number[] = [];
      const scores = await reranker.rerank('Anna Berlin job', ['one text', 'another text'], {
        tokensOf: (index) => {
          cut.push(index);
          return tokensOf(index === 0 ? documents[0]! : documents[4]!);
        },
      });
      expect(cut).toEqual([0, 1]);
      expect(scores[0]!).toBeGreaterThan(0.5);
      expect(scores[1]).toBe(0);
    });
  });
});

const BASE = 'https://rerank.test/v1';
const URL_ = `${BASE}/rerank`;
const API_KEY = 'rk-test-0123456789abcdef';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

interface RerankBody {
  model?: string;
  query: string;
  documents?: string[];
  texts?: string[];
  top_n?: number;
  return_documents?: boolean;
  truncate?: boolean;
  raw_scores?: boolean;
}

function makeReranker(overrides: Partial<HttpRerankerOptions> = {}) {
  const sleeps: number[] = [];
  const reranker = new HttpReranker({
    baseUrl: BASE,
    model: 'rerank-v3.5',
    apiKey: API_KEY,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
    ...overrides,
  });
  return { reranker, sleeps };
}

/** Records each request and answers with `respond(body)`. */
function recording(respond: (body: RerankBody) => unknown) {
  const requests: { body: RerankBody; headers: Headers; url: string }[] = [];
  const handler = http.post(URL_, async ({ request }) => {
    const body = (await request.json()) as RerankBody;
    requests.push({ body, headers: request.headers, url: request.url });
    return HttpResponse.json(respond(body) as Record<string, unknown>);
  });
  return { handler, requests };
}

async function rerankError(promise: Promise<unknown>): Promise<RerankError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RerankError);
  return error as RerankError;
}

const DOCS = ['alpha', 'beta', 'gamma'];

describe('HttpReranker', () => {
  it('sends a Cohere-style body with the key and maps shuffled results to input order', async () => {
    const { handler, requests } = recording(() => ({
      id: 'x',
      results: [
        { index: 2, relevance_score: 0.9 },
        { index: 0, relevance_score: 0.5 },
        { index: 1, relevance_score: 0.125 },
      ],
      meta: {},
    }));
    server.use(handler);
    const { reranker } = makeReranker({ baseUrl: `${BASE}/` });

    await expect(reranker.rerank('which letter', DOCS)).resolves.toEqual([0.5, 0.125, 0.9]);

    expect(reranker.name).toBe('http');
    expect(requests).toHaveLength(1);
    expect(requests[0]!.url).toBe(URL_);
    expect(requests[0]!.body).toEqual({
      model: 'rerank-v3.5',
      query: 'which letter',
      documents: DOCS,
      top_n: 3,
      return_documents: false,
    });
    expect(requests[0]!.headers.get('authorization')).toBe(`Bearer ${API_KEY}`);
    expect(requests[0]!.headers.get('content-type')).toBe('application/json');
  });

  it('omits model and Authorization when not configured, and sends extra headers', async () => {
    const { handler, requests } = recording(() => ({
      results: [{ index: 0, relevance_score: 0.3 }],
    }));
    server.use(handler);
    const { reranker } = makeReranker({
      model: undefined,
      apiKey: undefined,
      headers: { 'x-api-key': 'gateway-secret' },
    });
    await expect(reranker.rerank('q', ['d'])).resolves.toEqual([0.3]);
    expect(requests).toHaveLength(1);
    expect('model' in requests[0]!.body).toBe(false);
    expect(requests[0]!.headers.has('authorization')).toBe(false);
    expect(requests[0]!.headers.get('x-api-key')).toBe('gateway-secret');
  });

  it('keeps the query string of the base URL', async () => {
    let seen: string | undefined;
    server.use(
      http.post('https://azure.test/models/rerank', ({ request }) => {
        seen = request.url;
        return HttpResponse.json({ results: [{ index: 0, relevance_score: 1 }] });
      }),
    );
    const { reranker } = makeReranker({
      baseUrl: 'https://azure.test/models?api-version=2024-05-01-preview',
    });
    await expect(reranker.rerank('q', ['d'])).resolves.toEqual([1]);
    expect(seen).toBe('https://azure.test/models/rerank?api-version=2024-05-01-preview');
  });

  it('reads the TEI array shape', async () => {
    server.use(
      http.post(URL_, () =>
        HttpResponse.json([
          { index: 1, score: 0.75 },
          { index: 2, score: 0.5 },
          { index: 0, score: 0.25 },
        ]),
      ),
    );
    const { reranker } = makeReranker();
    await expect(reranker.rerank('q', DOCS)).resolves.toEqual([0.25, 0.75, 0.5]);
  });

  it('switches to the TEI body when TEI asks for `texts`, and stays switched', async () => {
    const requests: RerankBody[] = [];
    server.use(
      http.post(URL_, async ({ request }) => {
        const body = (await request.json()) as RerankBody;
        requests.push(body);
        if (!body.texts) {
          return new HttpResponse(
            'Failed to deserialize the JSON body into the target type: missing field `texts` at line 1 column 80',
            { status: 422 },
          );
        }
        return HttpResponse.json(body.texts.map((_, index) => ({ index, score: 0.5 })));
      }),
    );
    const { reranker, sleeps } = makeReranker();
    await expect(reranker.rerank('q', ['a', 'b'])).resolves.toEqual([0.5, 0.5]);
    await expect(reranker.rerank('q', ['c'])).resolves.toEqual([0.5]);
    expect(requests).toHaveLength(3);
    expect(requests[0]!.documents).toEqual(['a', 'b']);
    expect(requests[1]).toEqual({
      query: 'q',
      texts: ['a', 'b'],
      truncate: true,
      raw_scores: false,
    });
    expect(requests[2]!.texts).toEqual(['c']);
    expect(sleeps).toEqual([]);
  });

  it('scores documents missing from the results 0', async () => {
    const { handler, requests } = recording(() => ({
      results: [{ index: 1, relevance_score: 0.8 }],
    }));
    server.use(handler);
    const { reranker } = makeReranker();
    await expect(reranker.rerank('q', DOCS)).resolves.toEqual([0, 0.8, 0]);
    expect(requests[0]!.body.top_n).toBe(3);
  });

  it('squashes logits with the logistic function, keeping their order', async () => {
    server.use(
      http.post(URL_, () =>
        HttpResponse.json({
          results: [
            { index: 0, relevance_score: 0 },
            { index: 1, relevance_score: 4.2 },
            { index: 2, relevance_score: -3 },
          ],
        }),
      ),
    );
    const { reranker } = makeReranker();
    const scores = await reranker.rerank('q', DOCS);
    expect(scores[0]).toBeCloseTo(0.5, 12);
    expect(scores[1]).toBeCloseTo(1 / (1 + Math.exp(-4.2)), 12);
    expect(scores[2]).toBeCloseTo(1 / (1 + Math.exp(3)), 12);
    expect(scores[1]!).toBeGreaterThan(scores[0]!);
    expect(scores[0]!).toBeGreaterThan(scores[2]!);
  });

  it('waits for Retry-After on 429 and then succeeds', async () => {
    let calls = 0;
    server.use(
      http.post(URL_, () => {
        calls += 1;
        if (calls === 1) {
          return HttpResponse.json(
            { message: 'too many requests' },
            { status: 429, headers: { 'retry-after': '2' } },
          );
        }
        return HttpResponse.json({ results: [{ index: 0, relevance_score: 0.4 }] });
      }),
    );
    const { reranker, sleeps } = makeReranker();
    await expect(reranker.rerank('q', ['d'])).resolves.toEqual([0.4]);
    expect(calls).toBe(2);
    expect(sleeps).toEqual([2000]);
  });

  it('gives up on 500 after maxRetries retries with full-jitter backoff', async () => {
    let calls = 0;
    server.use(
      http.post(URL_, () => {
        calls += 1;
        return HttpResponse.json({ message: 'internal failure' }, { status: 500 });
      }),
    );
    const { reranker, sleeps } = makeReranker({ retryBaseMs: 100 });
    const error = await rerankError(reranker.rerank('q', ['d']));
    // Default maxRetries is 2: three attempts in all.
    expect(calls).toBe(3);
    expect(sleeps).toEqual([50, 100]);
    expect(error.status).toBe(500);
    expect(error.message).toContain('HTTP 500 after 3 attempts');
    expect(error.message).toContain('internal failure');
  });

  it('fails a 400 at once, with the server message and without the key', async () => {
    let calls = 0;
    server.use(
      http.post(URL_, () => {
        calls += 1;
        return HttpResponse.json(
          { message: `invalid request for key ${API_KEY}: ${'x'.repeat(1000)}` },
          { status: 400 },
        );
      }),
    );
    const { reranker, sleeps } = makeReranker();
    const error = await rerankError(reranker.rerank('q', ['d']));
    expect(calls).toBe(1);
    expect(sleeps).toEqual([]);
    expect(error.status).toBe(400);
    expect(error.message).toContain('invalid request for key ***');
    expect(error.message).not.toContain(API_KEY);
    expect(error.message.length).toBeLessThan(300);
  });

  it('times out a slow attempt and retries it', async () => {
    let calls = 0;
    server.use(
      http.post(URL_, async () => {
        calls += 1;
        if (calls === 1) await delay(2_000);
        return HttpResponse.json({ results: [{ index: 0, relevance_score: 0.6 }] });
      }),
    );
    const { reranker, sleeps } = makeReranker({ timeoutMs: 50 });
    const started = Date.now();
    await expect(reranker.rerank('q', ['d'])).resolves.toEqual([0.6]);
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
        return HttpResponse.json({ results: [] });
      }),
    );
    const { reranker } = makeReranker({ timeoutMs: 30, maxRetries: 1 });
    const error = await rerankError(reranker.rerank('q', ['d']));
    expect(calls).toBe(2);
    expect(error.status).toBeUndefined();
    expect(error.message).toContain('timed out after 30 ms');
  });

  it('retries a network error', async () => {
    let calls = 0;
    server.use(
      http.post(URL_, () => {
        calls += 1;
        if (calls === 1) return HttpResponse.error();
        return HttpResponse.json({ results: [{ index: 0, relevance_score: 0.2 }] });
      }),
    );
    const { reranker, sleeps } = makeReranker();
    await expect(reranker.rerank('q', ['d'])).resolves.toEqual([0.2]);
    expect(calls).toBe(2);
    expect(sleeps).toHaveLength(1);
  });

  it('makes no request for an empty list', async () => {
    const { handler, requests } = recording(() => ({ results: [] }));
    server.use(handler);
    const { reranker } = makeReranker();
    await expect(reranker.rerank('q', [])).resolves.toEqual([]);
    expect(requests).toHaveLength(0);
  });

  it.each([
    ['invalid JSON', () => new HttpResponse('<html>oops</html>', { status: 200 }), /invalid JSON/],
    ['no results', () => HttpResponse.json({ data: [] }), /neither a `results` array/],
    [
      'an index out of range',
      () => HttpResponse.json({ results: [{ index: 7, relevance_score: 0.1 }] }),
      /invalid index 7/,
    ],
    [
      'a non-numeric score',
      () => HttpResponse.json({ results: [{ index: 0, relevance_score: 'high' }] }),
      /non-finite score for index 0/,
    ],
    [
      'a duplicate index',
      () =>
        HttpResponse.json([
          { index: 0, score: 0.1 },
          { index: 0, score: 0.2 },
        ]),
      /two scores for index 0/,
    ],
  ])('rejects an answer with %s, without retrying', async (_name, respond, message) => {
    let calls = 0;
    server.use(
      http.post(URL_, () => {
        calls += 1;
        return respond();
      }),
    );
    const { reranker } = makeReranker();
    const error = await rerankError(reranker.rerank('q', ['d']));
    expect(calls).toBe(1);
    expect(error.message).toMatch(message);
  });
});
