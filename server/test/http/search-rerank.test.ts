import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

const RERANK_URL = 'http://rerank.test/v1/rerank';

describeDb('search with the Cohere-style HTTP reranker', () => {
  const mock = setupServer();
  let t: TestApp;
  let failing = false;
  let calls = 0;
  beforeAll(async () => {
    mock.listen({ onUnhandledRequest: 'bypass' });
    mock.use(
      http.post(RERANK_URL, async ({ request }) => {
        calls += 1;
        if (failing) return HttpResponse.json({ message: 'down' }, { status: 400 });
        const body = (await request.json()) as { query: string; documents: string[] };
        // Prefers documents mentioning rugby, whatever recall thought.
        return HttpResponse.json({
          results: body.documents.map((doc, index) => ({
            index,
            relevance_score: doc.includes('rugby') ? 0.99 : 0.01,
          })),
        });
      }),
    );
    t = await createTestApp({
      MNEMO_RERANK_PROVIDER: 'http',
      MNEMO_RERANK_BASE_URL: 'http://rerank.test/v1',
    });
    for (const text of ['Ravi plays football', 'Ravi sometimes plays rugby']) {
      await request(t.app)
        .post('/v1/memories')
        .set('x-api-key', t.tenant.apiKey)
        .send({ text, user_id: 'ravi' });
    }
  });
  afterAll(async () => {
    mock.close();
    await t?.close();
  });

  const search = () =>
    request(t.app)
      .post('/v1/search')
      .set('x-api-key', t.tenant.apiKey)
      .send({ query: 'Ravi plays football', user_id: 'ravi', retrieval_profile: 'precision' });

  it('reorders candidates by the reranker’s scores', async () => {
    const res = await search();
    expect(res.status).toBe(200);
    expect(calls).toBe(1);
    expect(res.body.results[0].text).toBe('Ravi sometimes plays rugby');
  });

  it('keeps answering in fused order when the reranker fails', async () => {
    failing = true;
    const res = await search();
    expect(res.status).toBe(200);
    expect(calls).toBe(2);
    expect(res.body.results[0].text).toBe('Ravi plays football');
  });
});
