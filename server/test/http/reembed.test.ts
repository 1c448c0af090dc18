import { eq } from 'drizzle-orm';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { createDeps, type AppDeps } from '../../src/deps.js';
import { memoryChunks } from '../../src/db/schema/index.js';
import { reembedChunks } from '../../src/jobs/reembed.js';
import { createEmbeddingProvider } from '../../src/providers/embeddings/index.js';
import { LocalEmbeddingProvider } from '../../src/providers/embeddings/local.js';
import { createTestApp, testConfig, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

/**
 * Memories written under mnemo-local-v2 (the default before the word vectors) after the server
 * starts with mnemo-local-v3: keyword search finds them at once, vector search once they are
 * embedded again.
 */
describeDb('re-embedding after the local embedder changed', () => {
  let t: TestApp;
  // A second server over the same database whose operations embed with v3, as after a restart.
  let restarted: AppDeps;
  const v3 = createEmbeddingProvider(testConfig().embeddings);
  const ids: string[] = [];

  beforeAll(async () => {
    t = await createTestApp({}, { embeddings: new LocalEmbeddingProvider() });
    for (const text of ['Jane plays the bass guitar', 'Jane is allergic to peanuts']) {
      const res = await request(t.app)
        .post('/v1/memories')
        .set('x-api-key', t.tenant.apiKey)
        .send({ user_id: 'jane', text, extract: false });
      expect(res.status).toBe(200);
      ids.push(res.body.memory_id);
    }
    restarted = await createDeps(t.deps.config, t.deps.logger, t.database, { embeddings: v3 });
  });
  afterAll(async () => {
    await restarted?.background.drain();
    await restarted?.statistics.drain();
    await restarted?.audit.drain();
    await restarted?.limits.close();
    await t?.close();
  });

  const search = (query: string, search_mode: string) =>
    request(createApp(restarted))
      .post('/v1/search')
      .set('x-api-key', t.tenant.apiKey)
      .send({ user_id: 'jane', query, search_mode });

  it('embeds the older chunks again, once, and vector search finds them', async () => {
    expect(v3.version).toMatch(/^local:mnemo-local-v3\.1:384:/);
    const keyword = await search('guitar', 'keyword');
    expect(keyword.body.results.map((r: { memory_id: string }) => r.memory_id)).toEqual([ids[0]]);
    expect((await search('guitar', 'vector')).body.results).toEqual([]);

    expect(await reembedChunks(t.database.db, v3, { batchSize: 1 })).toBe(2);
    const rows = await t.database.db
      .select()
      .from(memoryChunks)
      .where(eq(memoryChunks.workspaceId, t.tenant.workspaceId));
    expect(rows.map((row) => [row.embeddingDimension, row.embeddingVersion])).toEqual([
      [384, v3.version],
      [384, v3.version],
    ]);
    const [fresh] = await v3.embed([rows[0]!.text], 'document');
    const cosine = rows[0]!.embedding!.reduce((sum, x, i) => sum + x * fresh![i]!, 0);
    // Stored in half precision (halfvec): the same vector to about 3 decimal digits.
    expect(cosine).toBeCloseTo(1, 3);
    expect(await reembedChunks(t.database.db, v3)).toBe(0);

    const vector = await search('musical instrument', 'vector');
    expect(vector.status).toBe(200);
    expect(vector.body.results[0].memory_id).toBe(ids[0]);
  });

  it('leaves the chunks of a remote embedder alone', async () => {
    const remote = { ...v3, embed: v3.embed.bind(v3), inProcess: false, version: 'other' };
    expect(await reembedChunks(t.database.db, remote)).toBe(0);
  });
});
