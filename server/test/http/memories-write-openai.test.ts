import { eq } from 'drizzle-orm';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { memoryChunks } from '../../src/db/schema/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

const EMBEDDINGS_URL = 'http://embeddings.test/v1/embeddings';

describeDb('POST /v1/memories with the OpenAI-compatible provider', () => {
  const mock = setupServer();
  let t: TestApp;
  let calls = 0;
  beforeAll(async () => {
    // Only the provider's requests are mocked; supertest's loopback requests pass through.
    mock.listen({ onUnhandledRequest: 'bypass' });
    mock.use(
      http.post(EMBEDDINGS_URL, async ({ request }) => {
        calls += 1;
        if (calls === 1)
          return HttpResponse.json(
            { error: { message: 'slow down' } },
            { status: 429, headers: { 'retry-after': '0' } },
          );
        const body = (await request.json()) as { input: string[]; model: string };
        expect(request.headers.get('authorization')).toBe('Bearer sk-test-key-123456');
        return HttpResponse.json({
          data: body.input.map((text, index) => ({
            index,
            embedding: Array.from({ length: 1536 }, (_, i) => ((text.length + i) % 7) + 1),
          })),
        });
      }),
    );
    const env = {
      MNEMO_EMBEDDINGS_PROVIDER: 'openai',
      MNEMO_EMBEDDINGS_BASE_URL: 'http://embeddings.test/v1',
      MNEMO_EMBEDDINGS_API_KEY: 'sk-test-key-123456',
    };
    t = await createTestApp(env);
  });
  afterAll(async () => {
    mock.close();
    await t?.close();
  });

  it('embeds through the HTTP provider after a 429, and records provider, dimension and version', async () => {
    const res = await request(t.app)
      .post('/v1/memories')
      .set('x-api-key', t.tenant.apiKey)
      .send({ text: 'Quinn prefers aisle seats', user_id: 'quinn' });
    expect(res.status).toBe(200);
    expect(calls).toBe(2);
    const [chunk] = await t.database.db
      .select()
      .from(memoryChunks)
      .where(eq(memoryChunks.memoryId, res.body.memory_id));
    expect(chunk).toMatchObject({
      embeddingProvider: 'openai',
      embeddingDimension: 1536,
      embeddingVersion: 'openai:text-embedding-3-small:1536',
    });
    expect(chunk?.embedding).toHaveLength(1536);
    const health = await request(t.app).get('/v1/health');
    expect(health.body.embedding_model).toBe('openai/text-embedding-3-small');
  });
});
